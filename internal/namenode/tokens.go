package namenode

import (
	"net"
	"strconv"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/rpc/dfspb"
)

// Block access tokens (DESIGN "Security"): every LocatedBlock the namenode
// hands out carries a token for exactly the access it grants, so that a
// datanode serves a block only to whoever the namenode let open or write
// it. Tokens for writes name the pipeline's data addresses: datanodes dial
// only those.

// newTokens creates the block-key set, or nil when tokens are disabled.
func newTokens(cfg Config, now time.Time) (*blocktoken.Manager, error) {
	if !cfg.BlockAccessTokenEnable {
		return nil, nil
	}
	return blocktoken.NewManager(cfg.BlockAccessTokenLifetime, cfg.BlockKeyUpdateInterval, nil, now)
}

// exportKeys is the key set for a datanode, with its serial. Disabled
// tokens are said explicitly, so datanodes stop waiting for keys.
func (nn *NameNode) exportKeys() (*dfspb.ExportedBlockKeys, uint64) {
	if nn.tokens == nil {
		return &dfspb.ExportedBlockKeys{Enabled: false}, 1
	}
	return nn.tokens.Export()
}

// keysForHeartbeat ships the key set only to a datanode holding an older
// one: keys change once a roll interval.
func (nn *NameNode) keysForHeartbeat(req *dfspb.HeartbeatRequest, resp *dfspb.HeartbeatResponse) {
	keys, serial := nn.exportKeys()
	resp.BlockKeysSerial = serial
	if req.GetBlockKeysSerial() != serial {
		resp.BlockKeys = keys
	}
}

// rollKeys rolls the block keys when due (monitor).
func (nn *NameNode) rollKeys(now time.Time) {
	if nn.tokens == nil {
		return
	}
	changed, err := nn.tokens.Roll(now)
	if err != nil {
		nn.logger.Error("block key roll failed; the current key stays", "error", err)
		return
	}
	if changed {
		nn.logger.Info("block keys rolled", "serial", nn.tokens.Serial())
	}
}

// token signs access to lb's block for user with the given modes, letting
// datanodes dial the data addresses of targets. No-op when disabled.
func (nn *NameNode) token(lb *dfspb.LocatedBlock, user string, modes blocktoken.Mode, targets []*dfspb.DatanodeInfo) {
	if nn.tokens == nil || lb == nil {
		return
	}
	lb.Token = nn.blockToken(lb.GetBlock(), user, modes, targets)
}

func (nn *NameNode) blockToken(b *dfspb.ExtendedBlock, user string, modes blocktoken.Mode, targets []*dfspb.DatanodeInfo) *dfspb.BlockToken {
	if nn.tokens == nil {
		return nil
	}
	id := blocktoken.Identifier{User: user, BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Modes: modes}
	for _, t := range targets {
		id.Targets = append(id.Targets, dataAddrOf(t))
	}
	return nn.tokens.Issue(id, nn.clock())
}

// dataAddrOf is the address a datanode dials to reach dn's data port; it
// must spell it the way datanodes do.
func dataAddrOf(dn *dfspb.DatanodeInfo) string {
	return net.JoinHostPort(dn.GetIpAddr(), strconv.Itoa(int(dn.GetDataPort())))
}
