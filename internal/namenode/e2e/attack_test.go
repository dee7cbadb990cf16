package e2e_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// Adversarial tests (issue 23): alice and bob are two users with valid
// credentials of one secure cluster; bob attacks alice's files with what a
// logged-in user has, raw RPCs included. docs/security.md lists which
// test covers which hole.

// rawAs is a ClientProtocol client whose every call carries user's
// credential, for calls the client library would never make.
func rawAs(t *testing.T, c *testcluster.Cluster, user string) (dfspb.ClientProtocolClient, func() context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(c.NameNodeAddr(), pki.DialOption(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	cred := c.Credential(user)
	return dfspb.NewClientProtocolClient(conn), func() context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), auth.MDCredential, cred)
	}
}

// refused checks that err refuses bob (code) and that its message names
// none of the secrets given (alice's client name, a path bob may not see).
func refused(t *testing.T, what string, err error, code codes.Code, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: bob's call succeeded", what)
	}
	if status.Code(err) != code {
		t.Errorf("%s: %v; want code %v", what, err, code)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: the refusal names %q: %v", what, s, err)
		}
	}
}

// Hole 2: bob knows alice's client name (it is no secret: logs, pages,
// error messages) and the inode and block ids of her open files (they are
// sequential). With them he tries every call on an open file. Each is
// refused without naming her client or, for a file he may not reach, its
// path; alice's writes then finish and read back whole.
func TestAttackWriteIntoAnotherUsersOpenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	ctx := context.Background()
	admin := c.Client(t)
	for _, d := range []struct {
		path  string
		perm  fs.FileMode
		owner string
	}{{"/shared", 0o777, "alice"}, {"/home/alice", 0o700, "alice"}} {
		if err := admin.Mkdir(ctx, d.path, d.perm, true); err != nil {
			t.Fatal(err)
		}
		if err := admin.SetPermission(ctx, d.path, d.perm); err != nil {
			t.Fatal(err)
		}
		if err := admin.SetOwner(ctx, d.path, d.owner, ""); err != nil {
			t.Fatal(err)
		}
	}
	const aliceClient = "alice-writer-1"
	alice := c.Client(t, testcluster.WithUser("alice"), testcluster.WithConfig(func(cfg *client.Config) { cfg.ClientName = aliceClient }))
	aliceRaw, asAlice := rawAs(t, c, "alice")
	bob, asBob := rawAs(t, c, "bob")

	// Two open files: one in a directory bob may search (its path is no
	// secret, the file is 0666 so bob may write it when it is closed), one
	// in alice's private home.
	first := bytes.Repeat([]byte("alice's first half "), 20_000)
	second := bytes.Repeat([]byte("alice's second half "), 20_000)
	open := map[string]*client.FileWriter{}
	for _, p := range []string{"/shared/open", "/home/alice/secret"} {
		w, err := alice.Create(ctx, p, client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := alice.SetPermission(ctx, p, 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(first); err != nil { // past a packet: the first block is allocated
			t.Fatal(err)
		}
		open[p] = w
	}
	info := func(p string) (uint64, *dfspb.LocatedBlock) {
		st, err := aliceRaw.GetFileInfo(asAlice(), &dfspb.GetFileInfoRequest{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		locs, err := aliceRaw.GetBlockLocations(asAlice(), &dfspb.GetBlockLocationsRequest{Path: p, Length: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		lbs := locs.GetLocations().GetBlocks()
		if len(lbs) == 0 {
			t.Fatalf("%s: alice's open file shows no block being written", p)
		}
		return st.GetStatus().GetFileId(), lbs[len(lbs)-1]
	}
	for _, p := range []string{"/shared/open", "/home/alice/secret"} {
		id, lb := info(p)
		b := lb.GetBlock()
		secrets := []string{aliceClient}
		byPath := p
		if strings.HasPrefix(p, "/home/alice") {
			secrets = append(secrets, "/home/alice")
			byPath = "" // bob does not know it: he names the inode
		}
		nb := &dfspb.ExtendedBlock{BlockId: b.GetBlockId(), GenerationStamp: b.GetGenerationStamp() + 1, NumBytes: b.GetNumBytes()}
		// Each call quoting alice's client name (refused: bob did not
		// open the file), then his own (refused, and the refusal must
		// not tell him hers).
		for _, client := range []string{aliceClient, "bobs-client"} {
			leak := secrets
			if client == aliceClient {
				leak = leak[1:] // the refusal may echo the name bob sent
			}
			_, err := bob.AddBlock(asBob(), &dfspb.AddBlockRequest{Path: byPath, FileId: id, ClientName: client, Previous: b})
			refused(t, p+": addBlock as "+client, err, codes.PermissionDenied, leak...)
			_, err = bob.Complete(asBob(), &dfspb.CompleteRequest{Path: byPath, FileId: id, ClientName: client, Last: b})
			refused(t, p+": complete as "+client, err, codes.PermissionDenied, leak...)
			_, err = bob.AbandonBlock(asBob(), &dfspb.AbandonBlockRequest{Path: byPath, FileId: id, ClientName: client, Block: b})
			refused(t, p+": abandonBlock as "+client, err, codes.PermissionDenied, leak...)
			_, err = bob.GetAdditionalDatanode(asBob(), &dfspb.GetAdditionalDatanodeRequest{Path: byPath, FileId: id, ClientName: client, Block: b, NumAdditional: 1})
			refused(t, p+": getAdditionalDatanode as "+client, err, codes.PermissionDenied, leak...)
			_, err = bob.UpdateBlockForPipeline(asBob(), &dfspb.UpdateBlockForPipelineRequest{Block: b, ClientName: client})
			refused(t, p+": updateBlockForPipeline as "+client, err, codes.PermissionDenied, leak...)
			_, err = bob.UpdatePipeline(asBob(), &dfspb.UpdatePipelineRequest{ClientName: client, OldBlock: b, NewBlock: nb})
			refused(t, p+": updatePipeline as "+client, err, codes.PermissionDenied, leak...)
		}
	}
	// Append: bob may write /shared/open once closed, but while alice
	// writes it he is told it is being written, not by which client.
	_, err := bob.Append(asBob(), &dfspb.AppendRequest{Path: "/shared/open", ClientName: "bobs-client"})
	refused(t, "/shared/open: append", err, codes.FailedPrecondition, aliceClient)
	_, err = bob.Append(asBob(), &dfspb.AppendRequest{Path: "/shared/open", ClientName: aliceClient})
	refused(t, "/shared/open: append with alice's client name", err, codes.FailedPrecondition) // it may echo the name he sent
	_, err = bob.Create(asBob(), &dfspb.CreateRequest{Path: "/shared/open", ClientName: "bobs-client", Overwrite: true, Replication: 1})
	refused(t, "/shared/open: create overwrite", err, codes.FailedPrecondition, aliceClient)
	_, err = bob.Create(asBob(), &dfspb.CreateRequest{Path: "/home/alice/secret", ClientName: "bobs-client", Overwrite: true, Replication: 1})
	refused(t, "/home/alice/secret: create overwrite", err, codes.PermissionDenied, aliceClient)

	for p, w := range open {
		if _, err := w.Write(second); err != nil {
			t.Fatalf("%s: alice's write after bob's attempts: %v", p, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: alice's close after bob's attempts: %v", p, err)
		}
		r, err := alice.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, append(append([]byte{}, first...), second...)) {
			t.Fatalf("%s: alice read back %d bytes (%v), want her %d", p, len(got), err, len(first)+len(second))
		}
	}
}
