package namenode

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/rpc/dfspb"
)

// secureNN starts a namenode in secure mode and returns it with its
// identity secret and datanode key.
func secureNN(t *testing.T) (*NameNode, []byte, []byte) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Auth = auth.Secure
	nn := startNN(t, cfg)
	secret, err := auth.LoadKey(filepath.Join(cfg.MetaDir, "auth.key"))
	if err != nil {
		t.Fatal(err)
	}
	dnKey, err := auth.LoadKey(filepath.Join(cfg.MetaDir, "datanode.key"))
	if err != nil {
		t.Fatal(err)
	}
	return nn, secret, dnKey
}

// callAs is a context carrying metadata pairs.
func callAs(kv ...string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), kv...)
}

// In secure mode the name comes from the credential: an asserted name, a
// forged credential or none at all get nothing.
func TestSecureModeIdentity(t *testing.T) {
	nn, secret, _ := secureNN(t)
	c := dial(t, nn.Addr(), "")
	_, err := c.cp.Mkdirs(callAs(auth.MDUser, "hdfs"), &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unauthenticated, "no credential")
	forged := "hdfs:" + auth.UserCredential([]byte("not the secret, not the secret!!"), "hdfs")[len("hdfs:"):]
	_, err = c.cp.Mkdirs(callAs(auth.MDCredential, forged), &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unauthenticated, "not issued by this namenode")

	// alice's credential with hdfs (the superuser) asserted: alice it is.
	alice := auth.UserCredential(secret, "alice")
	_, err = c.cp.SetSafeMode(callAs(auth.MDCredential, alice, auth.MDUser, "hdfs"), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
	wantErr(t, err, codes.PermissionDenied, "user alice is not a superuser")
	if _, err := c.cp.Mkdirs(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs")), &dfspb.MkdirsRequest{Path: "/user/alice", Permission: 0o755, CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	st, err := c.cp.GetFileInfo(callAs(auth.MDCredential, alice), &dfspb.GetFileInfoRequest{Path: "/user/alice"})
	if err != nil || st.GetStatus().GetOwner() != "hdfs" {
		t.Fatalf("stat as alice: %v %v", st, err)
	}
}

// Groups are the server's to resolve: naming the supergroup in metadata
// makes no one a superuser, in either mode.
func TestClaimedSupergroupGivesNothing(t *testing.T) {
	for _, mode := range []string{auth.Simple, auth.Secure} {
		t.Run(mode, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Auth = mode
			nn := startNN(t, cfg)
			kv := []string{auth.MDUser, "mallory", "smarth-groups", "supergroup," + cfg.Supergroup}
			if mode == auth.Secure {
				secret, _ := auth.LoadKey(filepath.Join(cfg.MetaDir, "auth.key"))
				kv = append(kv, auth.MDCredential, auth.UserCredential(secret, "mallory"))
			}
			c := dial(t, nn.Addr(), "")
			_, err := c.cp.SetSafeMode(callAs(kv...), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
			wantErr(t, err, codes.PermissionDenied, "user mallory is not a superuser")
			_, err = c.cp.SetOwner(callAs(kv...), &dfspb.SetOwnerRequest{Path: "/", Owner: "mallory"})
			wantErr(t, err, codes.PermissionDenied, "only a superuser")
		})
	}
}

// Configured groups are honoured: membership the server knows of does
// make a superuser.
func TestConfiguredSupergroup(t *testing.T) {
	cfg := testConfig(t)
	cfg.Groups = map[string][]string{"carol": {"staff", cfg.Supergroup}}
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "carol")
	if _, err := c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.SetOwner(c.ctx(), &dfspb.SetOwnerRequest{Path: "/", Owner: "carol"}); err != nil {
		t.Fatalf("a configured supergroup member is not a superuser: %v", err)
	}
}

// The datanode protocol needs the cluster's datanode key: a client, even
// an authenticated superuser, cannot report a replica corrupt (and so
// have it deleted), and a datanode cannot speak for another.
func TestDatanodeProtocolNeedsDatanodeKey(t *testing.T) {
	nn, secret, dnKey := secureNN(t)
	c := dial(t, nn.Addr(), "")
	bad := &dfspb.DatanodeReportBadBlocksRequest{DatanodeId: "dn-1", Blocks: []*dfspb.ExtendedBlock{{BlockId: 1, GenerationStamp: 1}}}
	_, err := c.dp.ReportBadBlocks(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs")), bad)
	wantErr(t, err, codes.Unauthenticated, "datanode key")
	_, err = c.dp.ReportBadBlocks(callAs(auth.MDDatanode, auth.DatanodeCredential([]byte("guessed key guessed key guessed!"), "dn-1")), bad)
	wantErr(t, err, codes.Unauthenticated, "datanode key")
	_, err = c.dp.ReportBadBlocks(callAs(auth.MDDatanode, auth.DatanodeCredential(dnKey, "dn-2")), bad)
	wantErr(t, err, codes.PermissionDenied, "datanode dn-2 may not speak for datanode dn-1")

	info := &dfspb.DatanodeInfo{Id: "dn-1", Hostname: "h", IpAddr: "127.0.0.1", DataPort: 1, IpcPort: 2}
	_, err = c.dp.RegisterDatanode(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs")), &dfspb.RegisterDatanodeRequest{Datanode: info})
	wantErr(t, err, codes.Unauthenticated, "datanode key")
	reg, err := c.dp.RegisterDatanode(callAs(auth.MDDatanode, auth.DatanodeCredential(dnKey, "dn-1")), &dfspb.RegisterDatanodeRequest{Datanode: info})
	if err != nil {
		t.Fatalf("a datanode with the key cannot register: %v", err)
	}
	if !reg.GetBlockKeys().GetEnabled() || len(reg.GetBlockKeys().GetKeys()) == 0 {
		t.Fatalf("registration without block keys: %v", reg.GetBlockKeys())
	}
}

// Only proxy users (the superuser, proxy_users) may act for another user,
// as services act for a job's submitter.
func TestProxyUsers(t *testing.T) {
	nn, secret, _ := secureNN(t)
	c := dial(t, nn.Addr(), "")
	_, err := c.cp.SetSafeMode(callAs(auth.MDCredential, auth.UserCredential(secret, "alice"), auth.MDProxyUser, "hdfs"),
		&dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
	wantErr(t, err, codes.PermissionDenied, "user alice may not act for hdfs")
	_, err = c.cp.SetSafeMode(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs"), auth.MDProxyUser, "bob"),
		&dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
	wantErr(t, err, codes.PermissionDenied, "user bob is not a superuser")
}
