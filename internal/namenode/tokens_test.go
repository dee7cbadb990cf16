package namenode

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/blocktoken"
	"smarth/internal/rpc/dfspb"
)

// verifierOf is a datanode's view of nn's block keys.
func verifierOf(nn *NameNode) *blocktoken.Verifier {
	v := blocktoken.NewVerifier()
	v.Update(nn.exportKeys())
	return v
}

func addrs(infos []*dfspb.DatanodeInfo) []string {
	var out []string
	for _, d := range infos {
		out = append(out, dataAddrOf(d))
	}
	return out
}

// Every block the namenode hands out carries a token for exactly the
// access it grants: writers get WRITE naming their pipeline, readers READ,
// pipeline recovery WRITE for the new stamp naming the nodes asked for
// (registered ones only), a replacement COPY naming the new pipeline.
func TestNamenodeIssuesTokens(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for _, h := range []string{"dn1", "dn2", "dn3", "dn4"} {
		fc.add(h, "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1", Replication: 2})
	if err != nil {
		t.Fatal(err)
	}
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	if err != nil {
		t.Fatal(err)
	}
	lb := ab.GetBlock()
	v := verifierOf(nn)
	now := time.Now()
	b := lb.GetBlock()
	id, err := v.Check(lb.GetToken(), blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Write, Dials: addrs(lb.GetLocations())}, now)
	if err != nil {
		t.Fatalf("addBlock token: %v", err)
	}
	if id.User != "hdfs" {
		t.Fatalf("token user %q, want the caller hdfs", id.User)
	}
	if _, err := v.Check(lb.GetToken(), blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Copy}, now); err == nil {
		t.Fatal("a writer's token allows COPY")
	}

	lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f"})
	if err != nil {
		t.Fatal(err)
	}
	rt := lbs.GetLocations().GetLastBlock().GetToken()
	if _, err := v.Check(rt, blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Read}, now); err != nil {
		t.Fatalf("read token: %v", err)
	}
	if _, err := v.Check(rt, blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Write}, now); err == nil {
		t.Fatal("a reader's token allows WRITE")
	}

	ad, err := c.cp.GetAdditionalDatanode(c.ctx(), &dfspb.GetAdditionalDatanodeRequest{Path: "/f", Block: b, Existing: ids(lb),
		NumAdditional: 1, ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Check(ad.GetBlock().GetToken(), blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Copy,
		Dials: addrs(ad.GetBlock().GetLocations())}, now); err != nil {
		t.Fatalf("replacement token: %v", err)
	}

	_, err = c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: b, ClientName: "c1", Nodes: []string{"id-nowhere"}})
	wantErr(t, err, codes.InvalidArgument, "unknown datanode id-nowhere")
	up, err := c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: b, ClientName: "c1", Nodes: ids(ad.GetBlock())})
	if err != nil {
		t.Fatal(err)
	}
	gs := up.GetBlock().GetBlock().GetGenerationStamp()
	if _, err := v.Check(up.GetBlock().GetToken(), blocktoken.Want{BlockID: b.GetBlockId(), GS: gs, Mode: blocktoken.Write,
		Dials: addrs(ad.GetBlock().GetLocations())}, now); err != nil {
		t.Fatalf("recovery token: %v", err)
	}
}

// With tokens off the namenode says so to datanodes and signs nothing.
func TestTokensDisabled(t *testing.T) {
	cfg := testConfig(t)
	cfg.BlockAccessTokenEnable = false
	nn := startNN(t, cfg)
	keys, _ := nn.exportKeys()
	if keys.GetEnabled() {
		t.Fatal("keys exported as enabled")
	}
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/r")
	c := dial(t, nn.Addr(), "hdfs")
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1", Replication: 1})
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	if err != nil {
		t.Fatal(err)
	}
	if ab.GetBlock().GetToken() != nil {
		t.Fatal("token issued with tokens disabled")
	}
}
