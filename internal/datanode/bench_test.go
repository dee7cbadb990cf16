package datanode

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// Benchmarks of the datanode data path with in-process datanodes on
// loopback; the client side (packet building, CRC, window of 80 packets)
// runs in the same process, like a real client would. Figures on a shared
// 2-core machine are noisy.
//
//	go test ./internal/datanode -run '^$' -bench . -benchtime 16x
//
// SMARTH_BENCH_DIR puts the datanodes' data directories under another
// directory (e.g. /dev/shm to take the disk out of the picture).

const benchBlock = 64 << 20

func benchCluster(b *testing.B, n int) []*DataNode {
	t := &testing.T{}
	_ = t
	nn := startFakeNameNodeTB(b)
	var dns []*DataNode
	for range n {
		dns = append(dns, startDataNodeTB(b, nn))
	}
	return dns
}

// benchWrite writes one block of data through dns with a window of 80
// packets and waits for the last ack.
func benchWrite(b *testing.B, id uint64, data []byte, mode dfspb.WriteMode, dns []*DataNode) {
	c, err := net.Dial("tcp", dns[0].DataAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1}, ClientName: "bench",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: mode, BytesPerChecksum: 512}
	for _, dn := range dns[1:] {
		op.Targets = append(op.Targets, dn.Info())
	}
	op.Token = writeToken(op)
	if err := datatransfer.WriteOp(c, op); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := datatransfer.ReadResponse(br)
	if err != nil || resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		b.Fatalf("write refused: %v %v", resp, err)
	}
	window := make(chan struct{}, 80)
	done := make(chan error, 1)
	npkts := int64((len(data) + pkt - 1) / pkt)
	go func() {
		for {
			a, err := datatransfer.ReadAck(br)
			if err != nil {
				done <- err
				return
			}
			if a.Kind == datatransfer.AckFirstNodeFinish {
				continue
			}
			if a.FirstFailed() >= 0 {
				done <- fmt.Errorf("error ack %+v", a)
				return
			}
			if a.Seqno == npkts {
				done <- nil
				return
			}
			<-window
		}
	}()
	seq, off := int64(0), int64(0)
	for off < int64(len(data)) {
		window <- struct{}{}
		p := datatransfer.NewPacket(pkt, 512)
		n := p.Append(data[off:])
		p.Seal(off, seq, 0)
		if _, err := c.Write(p.Wire()); err != nil {
			b.Fatal(err)
		}
		p.Release()
		off += int64(n)
		seq++
	}
	window <- struct{}{}
	p := datatransfer.NewPacket(0, 512)
	p.Seal(off, seq, datatransfer.FlagLast)
	c.Write(p.Wire())
	p.Release()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func benchPipeline(b *testing.B, n int, mode dfspb.WriteMode) {
	dns := benchCluster(b, n)
	data := randomData(benchBlock, 1)
	b.SetBytes(benchBlock)
	id := uint64(1)
	for b.Loop() {
		benchWrite(b, id, data, mode, dns)
		id++
	}
}

func BenchmarkReceiver(b *testing.B)       { benchPipeline(b, 1, dfspb.WriteMode_CLASSIC) }
func BenchmarkPipeline3(b *testing.B)      { benchPipeline(b, 3, dfspb.WriteMode_CLASSIC) }
func BenchmarkPipeline3Multi(b *testing.B) { benchPipeline(b, 3, dfspb.WriteMode_MULTI_PIPELINE) }

// BenchmarkRead reads a finalized 64 MiB block (sendfile path) and
// verifies it like a client; BenchmarkReadNoTokens is the same with block
// access tokens disabled (the cost of the check, docs/benchmarks.md).
func BenchmarkRead(b *testing.B)         { benchRead(b, true) }
func BenchmarkReadNoTokens(b *testing.B) { benchRead(b, false) }

func benchRead(b *testing.B, tokens bool) {
	nn := startFakeNameNodeTB(b)
	nn.noKeys = !tokens
	dns := []*DataNode{startDataNodeTB(b, nn)}
	for dns[0].tokens.Serial() == 0 { // registered, keys installed
		time.Sleep(5 * time.Millisecond)
	}
	data := randomData(benchBlock, 2)
	benchWrite(b, 1, data, dfspb.WriteMode_CLASSIC, dns)
	tok := testToken(1, 1, blocktoken.Read)
	b.SetBytes(benchBlock)
	for b.Loop() {
		c, err := net.Dial("tcp", dns[0].DataAddr())
		if err != nil {
			b.Fatal(err)
		}
		datatransfer.WriteOp(c, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 1, GenerationStamp: 1}, Length: benchBlock, Token: tok})
		br := bufio.NewReaderSize(c, 256<<10)
		if _, err := datatransfer.ReadResponse(br); err != nil {
			b.Fatal(err)
		}
		pr := datatransfer.NewPacketReader(br)
		for {
			p, err := pr.Next()
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Verify(); err != nil {
				b.Fatal(err)
			}
			last := p.Header.Last()
			p.Release()
			if last {
				break
			}
		}
		c.Close()
	}
}

var _ = io.EOF
