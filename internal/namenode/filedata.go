package namenode

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// Append, truncate and concat as HDFS's ClientProtocol has them, with the
// semantics of the Hadoop FileSystem specification. fsstate's Append,
// Truncate and Concat records hold what their edits do.

func (s *clientRPC) Append(ctx context.Context, r *dfspb.AppendRequest) (*dfspb.AppendResponse, error) {
	return atMostOnce(ctx, s.nn, "append", func(ctx context.Context) (*dfspb.AppendResponse, error) {
		return s.nn.appendFile(ctx, r)
	})
}

func (s *clientRPC) Truncate(ctx context.Context, r *dfspb.TruncateRequest) (*dfspb.TruncateResponse, error) {
	ready, err := s.nn.truncate(ctx, r)
	return &dfspb.TruncateResponse{Ready: ready}, err
}

func (s *clientRPC) Concat(ctx context.Context, r *dfspb.ConcatRequest) (*dfspb.ConcatResponse, error) {
	return atMostOnce(ctx, s.nn, "concat", func(ctx context.Context) (*dfspb.ConcatResponse, error) {
		return &dfspb.ConcatResponse{}, s.nn.concat(ctx, r)
	})
}

// writerName checks a client name that is to hold a lease.
func writerName(op, path, client string) error {
	switch client {
	case "":
		return errInvalid("%s %s: client_name is required (it holds the lease)", op, path)
	case recoveryHolder:
		return errInvalid("%s %s: client name %q is reserved for the namenode", op, path, client)
	}
	return nil
}

// appendFile reopens a closed file for the caller's client (HDFS append):
// the client holds the lease from now on and continues the partial last
// block (returned with the datanodes holding it) or starts a new one.
func (nn *NameNode) appendFile(ctx context.Context, req *dfspb.AppendRequest) (*dfspb.AppendResponse, error) {
	const opName = "append"
	p, err := cleanPath(opName, req.GetPath())
	if err != nil {
		return nil, err
	}
	client := req.GetClientName()
	if err := writerName(opName, p, client); err != nil {
		return nil, err
	}
	host := client
	if h := peerHost(ctx); h != "" {
		host = h
	}
	c := callerOf(ctx)
	op := &fsstate.Append{Path: p, Client: client, Host: host, User: c.User}
	var resp *dfspb.AppendResponse
	_, err = nn.mutateCall(loggedCall(ctx), opName, p, c, op, func() error {
		return nn.checkReopenLeaseLocked(opName, p, client, c)
	}, func(res fsstate.Applied) {
		nn.leases.add(client, res.File.ID, nn.clock())
		resp = nn.appendResponseLocked(res.File, host)
	})
	return resp, err
}

// appendResponseLocked describes where the appending writer continues:
// the partial last block with the live datanodes holding a good replica
// (its pipeline), or the full last block as the previous one of the next
// addBlock.
func (nn *NameNode) appendResponseLocked(f *namespace.INode, host string) *dfspb.AppendResponse {
	resp := &dfspb.AppendResponse{Status: fileStatus(f)}
	n := len(f.Blocks)
	if n == 0 {
		return resp
	}
	last := f.Blocks[n-1]
	if last.State != blockmap.UnderConstruction {
		resp.Previous = ext(last)
		return resp
	}
	ids := last.Good(nn.isLive)
	nn.sortByDistanceLocked(ids, nn.clientLocationLocked(host), nil)
	// The pipeline's nodes: lease recovery looks for the block there if
	// the writer dies before any of them reports the reopened replica.
	last.SetTargets(ids)
	resp.LastBlock = nn.locatedLocked(f, n-1, nn.datanodeInfos(ids))
	return resp
}

// checkReopenLeaseLocked refuses to append to or truncate a file that is
// open for writing, as HDFS's recoverLeaseInternal does: the lease holder
// itself, another writer, and a file being recovered or truncated each get
// their own explanation. A writer silent past the soft limit loses the
// file to lease recovery and the caller is asked to retry.
//
// As HDFS, only a caller with write access to the file gets this far (it
// may not otherwise start a recovery of someone's file), and a caller of
// another user than the writer's is not told the writer's client name or
// host.
func (nn *NameNode) checkReopenLeaseLocked(op, p, client string, c namespace.Caller) error {
	f, err := nn.state.Tree().Lookup(p)
	if err != nil || f.IsDir() || f.Writer() == nil {
		return nil // the namespace gives the error, or there is no writer
	}
	if err := nn.state.Tree().CheckAccessFor(c, op, p, namespace.Write); err != nil {
		return err
	}
	w := f.Writer()
	holder, where := "another user's client", ""
	if w.User == c.User || w.User == "" && nn.state.Tree().IsSuper(c) {
		holder, where = w.Client, " on "+w.Host
	}
	l := nn.leases.ofFile(f.ID)
	switch {
	case w.Client == recoveryHolder:
		return errUnavailable("%s %s: the file is being truncated (its last block is being recovered to the new length); retry once the truncate completes", op, p)
	case l == nil:
		return errPrecondition("%s %s: the file is under construction by %s", op, p, holder)
	case l.holder == recoveryHolder:
		return errUnavailable("%s %s: lease recovery is in progress (the previous writer %s stopped); retry shortly", op, p, holder)
	case l.holder == client && w.User == c.User:
		return errPrecondition("%s %s: failed for client %s: it is already the current lease holder (the file is open for writing by this client)", op, p, client)
	case nn.clock().Sub(l.renewed) > nn.cfg.LeaseSoftLimit:
		nn.logger.Info("lease soft limit passed; recovering file for a new writer", "path", p, "holder", l.holder, "op", op, "client", client, "user", c.User)
		nn.startRecoveryLocked(f, nn.clock())
		return errUnavailable("%s %s: the lease of %s expired; the file is being recovered; retry shortly", op, p, holder)
	default:
		return errPrecondition("%s %s: failed for client %s because this file lease is currently owned by %s%s (the file is being written)", op, p, client, holder, where)
	}
}

// truncate cuts a closed file to new_length (HDFS truncate). It reports
// ready when the file is already at its new length and closed: the cut was
// on a block boundary (or there was nothing to cut). Otherwise the block
// holding the new end is cut by block recovery on the datanodes under a
// new generation stamp, and the file stays under construction until the
// recovery is committed.
func (nn *NameNode) truncate(ctx context.Context, req *dfspb.TruncateRequest) (bool, error) {
	const opName = "truncate"
	p, err := cleanPath(opName, req.GetPath())
	if err != nil {
		return false, err
	}
	client := req.GetClientName()
	if err := writerName(opName, p, client); err != nil {
		return false, err
	}
	host := client
	if h := peerHost(ctx); h != "" {
		host = h
	}
	c := callerOf(ctx)
	op := &fsstate.Truncate{Path: p, NewLength: req.GetNewLength(), Client: client, Host: host}
	ready := true
	_, err = nn.mutate(opName, p, c, op, func() error {
		if f, err := nn.state.Tree().Lookup(p); err == nil && !f.IsDir() && nn.truncatingLocked(f) && f.Length()+f.Blocks[len(f.Blocks)-1].NumBytes == req.GetNewLength() {
			// A repeat of the truncate in progress, whose reply was
			// lost (maybe with an active that then died): "not ready",
			// as HDFS's truncate answers it, so that a client may
			// repeat truncate (@Idempotent) after a failover. The last
			// block, under recovery, holds the new end; Length counts
			// the blocks before it.
			if err := nn.state.Tree().CheckAccessFor(c, opName, p, namespace.Write); err != nil {
				return err
			}
			return errTruncateInProgress
		}
		if err := nn.checkReopenLeaseLocked(opName, p, client, c); err != nil {
			return err
		}
		if err := nn.checkTruncatableLocked(p, req.GetNewLength()); err != nil {
			return err
		}
		// A cut inside a block a snapshot holds is made on a copy: the
		// new block's id and stamp go in the record (see applyTruncate).
		if f, err := nn.state.Tree().Lookup(p); err == nil && !f.IsDir() && f.Writer() == nil && nn.state.Tree().CopyOnTruncate(f, req.GetNewLength()) {
			op.Block = fsstate.BlockRef{ID: nn.state.Blocks().NextID(), GS: nn.state.Blocks().NextGS()}
		}
		return nil
	}, func(res fsstate.Applied) {
		f := res.File
		if nn.truncatingLocked(f) {
			ready = false
			now := nn.clock()
			nn.leases.add(recoveryHolder, f.ID, now)
			nn.startRecoveryLocked(f, now)
			nn.logger.Info("truncate: recovering the last block to its new length", "path", f.Path(),
				"length", req.GetNewLength(), "block", f.Blocks[len(f.Blocks)-1].ID, "client", client,
				"copy_of", f.Writer().CopySource.ID)
		}
	})
	if err == errTruncateInProgress {
		return false, nil
	}
	return ready && err == nil, err
}

// errTruncateInProgress ends a repeated truncate's mutation with nothing
// applied; the caller answers "not ready".
var errTruncateInProgress = status.Error(codes.Aborted, "truncate: the same truncate is in progress")

// checkTruncatableLocked refuses a truncate inside a block no live
// datanode holds: recovery could not cut it, and lease recovery would then
// drop the block and the bytes before the new end with it.
func (nn *NameNode) checkTruncatableLocked(p string, newLength int64) error {
	f, err := nn.state.Tree().Lookup(p)
	if err != nil || f.IsDir() || newLength < 0 || newLength >= f.Length() {
		return nil // the namespace gives the error, or nothing is cut
	}
	keep, cut, _ := namespace.TruncatePoint(f, newLength)
	if !cut {
		return nil
	}
	if b := f.Blocks[keep]; len(b.Good(nn.isLive)) == 0 {
		return errUnavailable("truncate %s: no live datanode holds a good replica of block %d, which the new length %d falls in; it cannot be cut now", p, b.ID, newLength)
	}
	return nil
}

// truncatingLocked says whether f waits for its last block to be cut by
// truncate recovery. A truncate leaves the namenode itself as the file's
// writer; a file of a client whose lease expired keeps that client as its
// writer (only the lease moves to the recovery holder).
func (nn *NameNode) truncatingLocked(f *namespace.INode) bool {
	n := len(f.Blocks)
	return f.Writer() != nil && f.Writer().Client == recoveryHolder && n > 0 && f.Blocks[n-1].State == blockmap.UnderConstruction
}

// truncateRecovery fills in a recovery command for truncate recovery of b
// when b is the block a truncate of f is cutting.
// For a copy-on-truncate the command names the source block (as the
// snapshot holds it) and the new block's id.
func (nn *NameNode) truncateRecoveryLocked(f *namespace.INode, b *blockmap.Block, cmd *dfspb.RecoverBlockCommand) {
	if nn.truncatingLocked(f) && f.Blocks[len(f.Blocks)-1] == b {
		cmd.Truncate, cmd.NewLength = true, b.NumBytes
		if src := nn.state.CopySource(f); src != nil {
			cmd.Block, cmd.NewBlockId = ext(src), b.ID
		}
	}
}

// recoverySourceLocked is the block whose replicas recover b: b itself,
// or for the new block of a copy-on-truncate the block it is copied from
// (the new block has no replica until the copy is made).
func (nn *NameNode) recoverySourceLocked(f *namespace.INode, b *blockmap.Block) *blockmap.Block {
	if nn.truncatingLocked(f) && f.Blocks[len(f.Blocks)-1] == b {
		if src := nn.state.CopySource(f); src != nil {
			return src
		}
	}
	return b
}

// concat moves the blocks of the sources to the end of the target and
// deletes the sources, in one edit record (HDFS concat).
func (nn *NameNode) concat(ctx context.Context, req *dfspb.ConcatRequest) error {
	const opName = "concat"
	target, err := cleanPath(opName, req.GetTarget())
	if err != nil {
		return err
	}
	if len(req.GetSrcs()) == 0 {
		return errInvalid("%s %s: no sources given", opName, target)
	}
	if len(req.GetSrcs()) > maxConcatSources {
		return errInvalid("%s %s: %d sources, at most %d in one call", opName, target, len(req.GetSrcs()), maxConcatSources)
	}
	srcs := make([]string, len(req.GetSrcs()))
	for i, s := range req.GetSrcs() {
		if srcs[i], err = cleanPath(opName, s); err != nil {
			return err
		}
	}
	c := callerOf(ctx)
	op := &fsstate.Concat{Path: target, Srcs: srcs}
	_, err = nn.mutateCall(loggedCall(ctx), opName, target, c, op, nil, func(fsstate.Applied) { nn.dirty = true })
	return err
}

// maxConcatSources bounds one concat's edit record (HDFS has no limit, but
// an RPC message is bounded anyway).
const maxConcatSources = 10000
