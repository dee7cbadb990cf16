package datanode

import (
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/rpc/dfspb"
)

// Test block keys: every fake namenode and every token the helpers mint
// come from a manager fed the same constant "randomness", so all of them
// share key ids and secrets and a helper can sign a token without a
// handle on the fake namenode.

type constReader struct{}

func (constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

func testKeys() *blocktoken.Manager {
	m, err := blocktoken.NewManager(0, 0, constReader{}, time.Now())
	if err != nil {
		panic(err) // constReader never fails
	}
	return m
}

// testToken signs access to block id/gs with modes, naming the data
// addresses of targets.
func testToken(id, gs uint64, modes blocktoken.Mode, targets ...*dfspb.DatanodeInfo) *dfspb.BlockToken {
	ident := blocktoken.Identifier{User: "test-user", BlockID: id, GS: gs, Modes: modes}
	for _, t := range targets {
		ident.Targets = append(ident.Targets, dataAddr(t))
	}
	return testKeys().Issue(ident, time.Now())
}

// writeToken is the token the namenode would hand out with op: the mode
// and stamp its stage needs, naming every target.
func writeToken(op *dfspb.WriteBlockOp) *dfspb.BlockToken {
	w := writeWant(op)
	id := blocktoken.Identifier{User: "test-user", BlockID: w.BlockID, GS: w.GS, Modes: w.Mode, Targets: w.Dials}
	return testKeys().Issue(id, time.Now())
}
