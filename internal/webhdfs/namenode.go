package webhdfs

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"

	"google.golang.org/grpc/peer"

	"smarth/internal/rpc/dfspb"
)

// Config wires a namenode's WebHDFS handler to the namenode.
type Config struct {
	// RPC is the namenode's own ClientProtocol implementation, called in
	// process with the caller Auth establishes.
	RPC  dfspb.ClientProtocolServer
	Auth Authority
	// CheckAccess answers CHECKACCESS: nil when the caller in ctx has
	// want (rwx bits) on path, else the namenode's denial.
	CheckAccess func(ctx context.Context, path string, want uint16) error
	// TrashRoot is the trash directory of user (GETTRASHROOT).
	TrashRoot func(user string) string
	// NameNodeRPC is the namenode's gRPC address, given to datanodes in
	// redirects (Hadoop's namenoderpcaddress).
	NameNodeRPC string
	Logger      *slog.Logger
}

// Handler serves /webhdfs/v1/ on the namenode.
type Handler struct {
	cfg Config
	log *slog.Logger
}

// New returns the namenode's WebHDFS handler.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, log: cfg.Logger}
}

// call is one request being answered.
type call struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request
	p    Params
	op   string
	path string
	user string
	ctx  context.Context // carries the caller, for RPC methods
}

type opFunc func(c *call) error

// The operations by HTTP method, named as on the WebHDFS page. The
// features smarth lacks (erasure coding, storage-type quotas, the storage
// policy satisfier) answer as a Hadoop 3.4 namenode configured without
// them does (ecpolicy.go). A nil entry would answer
// UnsupportedOperationException, 400.
var methods = map[string]struct {
	enum string // Hadoop's enum class, named in the unknown-op error
	ops  map[string]opFunc
}{
	http.MethodGet: {"GetOpParam", map[string]opFunc{
		"OPEN": (*call).redirect, "GETFILECHECKSUM": (*call).redirect,
		"GETFILESTATUS": (*call).getFileStatus, "GETFILELINKSTATUS": (*call).getFileStatus,
		"LISTSTATUS": (*call).listStatus, "LISTSTATUS_BATCH": (*call).listStatusBatch,
		"GETCONTENTSUMMARY": (*call).contentSummary, "GETQUOTAUSAGE": (*call).quotaUsage,
		"GETHOMEDIRECTORY": (*call).homeDirectory, "GETTRASHROOT": (*call).trashRoot,
		"GETDELEGATIONTOKEN": (*call).getDelegationToken,
		"GETXATTRS":          (*call).getXAttrs, "LISTXATTRS": (*call).listXAttrs,
		"CHECKACCESS": (*call).checkAccess, "GETSERVERDEFAULTS": (*call).serverDefaults,
		"GETFILEBLOCKLOCATIONS": (*call).blockLocations, "GETSTATUS": (*call).fsStatus,
		"GETLINKTARGET": (*call).linkTarget,
		"GETACLSTATUS":  (*call).getACLStatus, "GETALLSTORAGEPOLICY": (*call).allStoragePolicies,
		"GETSTORAGEPOLICY": (*call).getStoragePolicy, "GETSNAPSHOTDIFF": (*call).snapshotDiff,
		"GETSNAPSHOTTABLEDIRECTORYLIST": (*call).snapshottableDirs, "GETSNAPSHOTLIST": (*call).snapshotList,
		"GETSNAPSHOTDIFFLISTING": (*call).snapshotDiffListing, "GETECPOLICY": (*call).getECPolicy,
		"GETECPOLICIES": (*call).getECPolicies, "GET_BLOCK_LOCATIONS": (*call).locatedBlocks,
	}},
	http.MethodPut: {"PutOpParam", map[string]opFunc{
		"CREATE": (*call).redirect, "MKDIRS": (*call).mkdirs, "CREATESYMLINK": (*call).createSymlink,
		"RENAME": (*call).rename, "SETREPLICATION": (*call).setReplication, "SETOWNER": (*call).setOwner,
		"SETPERMISSION": (*call).setPermission, "SETTIMES": (*call).setTimes,
		"RENEWDELEGATIONTOKEN": (*call).renewDelegationToken, "CANCELDELEGATIONTOKEN": (*call).cancelDelegationToken,
		"SETXATTR": (*call).setXAttr, "REMOVEXATTR": (*call).removeXAttr, "SETQUOTA": (*call).setQuota,
		"MODIFYACLENTRIES": (*call).modifyACLEntries, "REMOVEACLENTRIES": (*call).removeACLEntries,
		"REMOVEDEFAULTACL": (*call).removeDefaultACL, "REMOVEACL": (*call).removeACL, "SETACL": (*call).setACL,
		"ALLOWSNAPSHOT": (*call).allowSnapshot, "DISALLOWSNAPSHOT": (*call).disallowSnapshot,
		"CREATESNAPSHOT": (*call).createSnapshot, "RENAMESNAPSHOT": (*call).renameSnapshot,
		"SETSTORAGEPOLICY": (*call).setStoragePolicy, "SATISFYSTORAGEPOLICY": (*call).satisfyStoragePolicy,
		"SETQUOTABYSTORAGETYPE": (*call).setQuotaByStorageType, "ENABLEECPOLICY": (*call).enableECPolicy,
		"DISABLEECPOLICY": (*call).disableECPolicy, "SETECPOLICY": (*call).setECPolicy,
	}},
	http.MethodPost: {"PostOpParam", map[string]opFunc{
		"APPEND": (*call).redirect, "CONCAT": (*call).concat, "TRUNCATE": (*call).truncate,
		"UNSETSTORAGEPOLICY": (*call).unsetStoragePolicy, "UNSETECPOLICY": (*call).unsetECPolicy,
	}},
	http.MethodDelete: {"DeleteOpParam", map[string]opFunc{
		"DELETE": (*call).delete, "DELETESNAPSHOT": (*call).deleteSnapshot,
	}},
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("panic in webhdfs handler", "url", r.URL.String(), "panic", v, "stack", string(debug.Stack()))
			WriteError(w, Exception("RuntimeException", fmt.Sprintf("internal namenode error: %v", v)))
		}
	}()
	c, rerr := parseCall(w, r)
	if rerr == nil {
		rerr = h.serve(c)
	}
	if rerr != nil {
		h.log.Debug("webhdfs error", "op", c.op, "path", c.path, "user", c.user, "error", rerr)
		WriteError(w, rerr)
	}
}

// parseCall reads the method, op, path and parameters of r.
func parseCall(w http.ResponseWriter, r *http.Request) (*call, *RemoteException) {
	c := &call{w: w, r: r}
	m, ok := methods[r.Method]
	if !ok {
		return c, Unsupported(fmt.Sprintf("HTTP method %s is not supported by WebHDFS (GET, PUT, POST, DELETE)", r.Method))
	}
	p, err := ParseQuery(r.URL.RawQuery)
	if err != nil {
		return c, FromError(err)
	}
	c.p = p
	c.op = strings.ToUpper(p.Str("op"))
	if c.op == "" || c.op == "NULL" {
		c.op = "NULL"
		return c, Unsupported("op=NULL is not supported")
	}
	if _, known := m.ops[c.op]; !known {
		return c, paramError("op", "No enum constant org.apache.hadoop.hdfs.web.resources."+m.enum+".Op."+c.op)
	}
	raw := strings.TrimPrefix(r.URL.Path, Prefix)
	if raw == "" {
		raw = "/"
	}
	c.path, err = CleanPath("path", raw)
	if err != nil {
		return c, FromError(err)
	}
	return c, nil
}

func (h *Handler) serve(c *call) *RemoteException {
	c.h = h
	f := methods[c.r.Method].ops[c.op]
	if f == nil {
		return Unsupported(fmt.Sprintf("op=%s is not supported", c.op))
	}
	user, rerr := authenticate(h.cfg.Auth, c.r, c.p)
	if rerr != nil {
		return rerr
	}
	c.user = user
	c.ctx = h.cfg.Auth.Caller(withPeer(c.r), user)
	if err := f(c); err != nil {
		return hdfsNotFound(c.op, c.path, FromError(err))
	}
	return nil
}

// notFoundWording is how HDFS words a missing path for the operations
// whose only missing thing can be the path: clients match these texts
// (HdfsCLI looks for "does not exist" to tell a missing path from a
// failure), so ours ("list /x: no such file or directory") broke walks,
// uploads and downloads. LISTSTATUS is FSDirStatAndListingOp's "File %s
// does not exist."; the others go through INodeFile.valueOf or
// FSDirectory.resolveLastINode, "File does not exist: %s".
var notFoundWording = map[string]string{
	"LISTSTATUS": "File %s does not exist.", "LISTSTATUS_BATCH": "File %s does not exist.",
	"GETFILESTATUS": "File does not exist: %s", "GETFILELINKSTATUS": "File does not exist: %s",
	"OPEN": "File does not exist: %s", "GETFILECHECKSUM": "File does not exist: %s",
	"GETCONTENTSUMMARY": "File does not exist: %s", "GETQUOTAUSAGE": "File does not exist: %s",
	"GETFILEBLOCKLOCATIONS": "File does not exist: %s", "GET_BLOCK_LOCATIONS": "File does not exist: %s",
	"GETACLSTATUS": "File does not exist: %s",
}

// hdfsNotFound rewords a FileNotFoundException about the call's own path
// as HDFS words it for op; any other exception passes unchanged.
func hdfsNotFound(op, path string, re *RemoteException) *RemoteException {
	format, ok := notFoundWording[op]
	if !ok || re.Exception != "FileNotFoundException" || !strings.HasSuffix(re.Message, path+": no such file or directory") {
		return re
	}
	return Exception("FileNotFoundException", fmt.Sprintf(format, path))
}

// withPeer gives the in-process RPC the HTTP client's address, which the
// namenode uses for locality as it does a gRPC peer's.
func withPeer(r *http.Request) context.Context {
	ap, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
	if err != nil {
		return r.Context()
	}
	return peer.NewContext(r.Context(), &peer.Peer{Addr: ap})
}

// ok answers 200 with no body, as Hadoop's void operations.
func (c *call) ok() error {
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusOK)
	return nil
}

func (c *call) json(v any) error {
	WriteJSON(c.w, v)
	return nil
}

// ---------------------------------------------------------------- reads

func (c *call) stat(p string) (*dfspb.FileStatus, error) {
	r, err := c.h.cfg.RPC.GetFileInfo(c.ctx, &dfspb.GetFileInfoRequest{Path: p})
	if err != nil {
		return nil, err
	}
	return r.GetStatus(), nil
}

func (c *call) getFileStatus() error {
	st, err := c.stat(c.path)
	if err != nil {
		return err
	}
	return c.json(map[string]any{"FileStatus": FileStatus(st, "")})
}

// list pages through a directory from startAfter; limit 0 is everything.
func (c *call) list(startAfter string, limit int) ([]map[string]any, uint32, error) {
	var out []map[string]any
	for {
		r, err := c.h.cfg.RPC.GetListing(c.ctx, &dfspb.GetListingRequest{Path: c.path, StartAfter: startAfter})
		if err != nil {
			return nil, 0, err
		}
		entries := r.GetEntries()
		for i, st := range entries {
			suffix := st.GetPath()[strings.LastIndexByte(st.GetPath(), '/')+1:]
			if st.GetPath() == c.path && st.GetType() != dfspb.FileType_DIRECTORY {
				suffix = "" // listing a file lists the file itself
			}
			out = append(out, FileStatus(st, suffix))
			if limit > 0 && len(out) == limit {
				return out, r.GetRemaining() + uint32(len(entries)-i-1), nil
			}
		}
		if r.GetRemaining() == 0 || len(entries) == 0 {
			return out, 0, nil
		}
		startAfter = entries[len(entries)-1].GetPath()
		startAfter = startAfter[strings.LastIndexByte(startAfter, '/')+1:]
	}
}

func (c *call) listStatus() error {
	entries, _, err := c.list("", 0)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []map[string]any{}
	}
	return c.json(map[string]any{"FileStatuses": map[string]any{"FileStatus": entries}})
}

// batchSize is a LISTSTATUS_BATCH page (HDFS dfs.ls.limit).
const batchSize = 1000

func (c *call) listStatusBatch() error {
	entries, remaining, err := c.list(c.p.Str("startAfter"), batchSize)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []map[string]any{}
	}
	return c.json(map[string]any{"DirectoryListing": map[string]any{
		"partialListing":   map[string]any{"FileStatuses": map[string]any{"FileStatus": entries}},
		"remainingEntries": remaining,
	}})
}

func (c *call) summary() (*dfspb.GetContentSummaryResponse, error) {
	return c.h.cfg.RPC.GetContentSummary(c.ctx, &dfspb.GetContentSummaryRequest{Path: c.path})
}

func (c *call) contentSummary() error {
	s, err := c.summary()
	if err != nil {
		return err
	}
	return c.json(map[string]any{"ContentSummary": map[string]any{
		"directoryCount": s.GetDirectoryCount(), "fileCount": s.GetFileCount(), "length": s.GetLength(),
		"quota": s.GetQuota(), "spaceConsumed": s.GetSpaceConsumed(), "spaceQuota": s.GetSpaceQuota(),
		"ecPolicy": "", "typeQuota": typeQuotaJSON(s),
	}})
}

func (c *call) quotaUsage() error {
	s, err := c.summary()
	if err != nil {
		return err
	}
	return c.json(map[string]any{"QuotaUsage": map[string]any{
		"fileAndDirectoryCount": s.GetFileCount() + s.GetDirectoryCount(),
		"quota":                 s.GetQuota(), "spaceConsumed": s.GetSpaceConsumed(), "spaceQuota": s.GetSpaceQuota(),
		"typeQuota": typeQuotaJSON(s),
	}})
}

func (c *call) homeDirectory() error { return c.json(pathJSON("/user/" + c.user)) }

func (c *call) trashRoot() error { return c.json(pathJSON(c.h.cfg.TrashRoot(c.user))) }

func (c *call) serverDefaults() error {
	d, err := c.h.cfg.RPC.GetServerDefaults(c.ctx, &dfspb.GetServerDefaultsRequest{})
	if err != nil {
		return err
	}
	return c.json(map[string]any{"FsServerDefaults": map[string]any{
		"blockSize": d.GetBlockSize(), "bytesPerChecksum": d.GetBytesPerChecksum(), "writePacketSize": d.GetPacketSize(),
		"replication": d.GetReplication(), "fileBufferSize": 4096, "encryptDataTransfer": false,
		"trashInterval":  d.GetTrashIntervalMs() / 60000,  // minutes, as fs.trash.interval
		"checksumType":   2,                               // DataChecksum.Type.CRC32C
		"keyProviderUri": "", "defaultStoragePolicyId": 7, // HOT
	}})
}

// fsAction parses CHECKACCESS's "[r-][w-][x-]".
func fsAction(s string) (uint16, bool) {
	if len(s) != 3 {
		return 0, false
	}
	var want uint16
	for i, bit := range []struct {
		ch  byte
		val uint16
	}{{'r', 4}, {'w', 2}, {'x', 1}} {
		switch s[i] {
		case bit.ch:
			want |= bit.val
		case '-':
		default:
			return 0, false
		}
	}
	return want, true
}

func (c *call) checkAccess() error {
	s := c.p.Str("fsaction")
	want, ok := fsAction(s)
	if !ok {
		return paramError("fsaction", fmt.Sprintf("Invalid value: %q does not belong to the domain [r-][w-][x-]", s))
	}
	if err := c.h.cfg.CheckAccess(c.ctx, c.path, want); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) blockLocations() error {
	off, err := c.p.Long("offset", 0, 0)
	if err != nil {
		return err
	}
	length, err := c.p.Long("length", math.MaxInt64, 0)
	if err != nil {
		return err
	}
	r, err := c.h.cfg.RPC.GetBlockLocations(c.ctx, &dfspb.GetBlockLocationsRequest{Path: c.path, Offset: off, Length: length})
	if err != nil {
		return err
	}
	var locs []map[string]any
	for _, lb := range r.GetLocations().GetBlocks() {
		hosts, names, topo, types := []string{}, []string{}, []string{}, []string{}
		for _, d := range lb.GetLocations() {
			name := net.JoinHostPort(d.GetIpAddr(), strconv.Itoa(int(d.GetDataPort())))
			hosts, names, types = append(hosts, d.GetHostname()), append(names, name), append(types, "DISK")
			topo = append(topo, strings.TrimSuffix(d.GetRack(), "/")+"/"+name)
		}
		locs = append(locs, map[string]any{
			"offset": lb.GetOffset(), "length": lb.GetBlock().GetNumBytes(), "corrupt": lb.GetCorrupt(),
			"hosts": hosts, "names": names, "topologyPaths": topo, "storageTypes": types, "cachedHosts": []string{},
		})
	}
	if locs == nil {
		locs = []map[string]any{}
	}
	return c.json(map[string]any{"BlockLocations": map[string]any{"BlockLocation": locs}})
}

func (c *call) fsStatus() error {
	r, err := c.h.cfg.RPC.GetDatanodeReport(c.ctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
	if err != nil {
		return err
	}
	var capacity, used, remaining int64
	for _, d := range r.GetDatanodes() {
		capacity, used, remaining = capacity+d.GetCapacity(), used+d.GetDfsUsed(), remaining+d.GetRemaining()
	}
	return c.json(map[string]any{"FsStatus": map[string]any{"capacity": capacity, "used": used, "remaining": remaining}})
}

// linkTarget: smarth has no symlinks (HDFS's default), so every existing
// path is not one.
func (c *call) linkTarget() error {
	if _, err := c.stat(c.path); err != nil {
		return err
	}
	return Exception("IOException", fmt.Sprintf("Path %s is not a symbolic link", c.path))
}

// ---------------------------------------------------------------- writes

func (c *call) mkdirs() error {
	// As HDFS's NamenodeWebHdfsMethods: permission (default 755) is the
	// mode, already masked by the client (WebHdfsFileSystem applies its
	// umask and sends the original as unmaskedpermission), so the
	// namenode's umask does not apply again. unmaskedpermission only
	// matters to HDFS under a default ACL; here it is checked and unused.
	perm, err := c.p.Permission("permission", 0o755)
	if err != nil {
		return err
	}
	if _, err := c.p.Permission("unmaskedpermission", 0o755); err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.Mkdirs(c.ctx, &dfspb.MkdirsRequest{Path: c.path, Permission: perm, CreateParent: true, Masked: true}); err != nil {
		return err
	}
	return c.json(boolean(true))
}

func (c *call) createSymlink() error {
	dst, err := c.destination()
	if err != nil {
		return err
	}
	parent, err := c.p.Bool("createParent", true)
	if err != nil {
		return err
	}
	_, err = c.h.cfg.RPC.CreateSymlink(c.ctx, &dfspb.CreateSymlinkRequest{Target: dst, Link: c.path, Permission: 0o777, CreateParent: parent})
	if err != nil {
		return err
	}
	return c.ok()
}

func (c *call) destination() (string, error) {
	d := c.p.Str("destination")
	if d == "" {
		return "", paramError("destination", "destination is required")
	}
	if u, err := url.Parse(d); err == nil && u.Scheme != "" {
		d = u.Path // a full URI names a path on this file system
	}
	return CleanPath("destination", d)
}

// rename: without renameoptions, the old FileSystem.rename, which answers
// {"boolean": false} when the source is missing or the destination exists
// or has no parent; with renameoptions (NONE, OVERWRITE, TO_TRASH), rename2,
// which raises those as exceptions.
func (c *call) rename() error {
	dst, err := c.destination()
	if err != nil {
		return err
	}
	opts := strings.ToUpper(c.p.Str("renameoptions"))
	if opts == "" {
		_, err := c.h.cfg.RPC.Rename(c.ctx, &dfspb.RenameRequest{Src: c.path, Dst: dst})
		if err != nil {
			switch FromError(err).Exception {
			case "FileNotFoundException", "FileAlreadyExistsException", "IllegalArgumentException", "ParentNotDirectoryException":
				return c.json(boolean(false))
			}
			return err
		}
		return c.json(boolean(true))
	}
	overwrite, toTrash := false, false
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "NONE":
		case "OVERWRITE":
			overwrite = true
		case "TO_TRASH": // Hadoop 3.4's TrashPolicyDefault moves with it
			toTrash = true
		default:
			return paramError("renameoptions", fmt.Sprintf("No enum constant org.apache.hadoop.fs.Options.Rename.%s", o))
		}
	}
	// One namenode operation: with OVERWRITE the destination is replaced
	// in the same journal record, as HDFS's rename2 does it.
	if _, err := c.h.cfg.RPC.Rename(c.ctx, &dfspb.RenameRequest{Src: c.path, Dst: dst, Rename2: true, Overwrite: overwrite, ToTrash: toTrash}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) setReplication() error {
	st, err := c.stat(c.path)
	if err != nil {
		return err
	}
	if st.GetType() == dfspb.FileType_DIRECTORY {
		return c.json(boolean(false)) // HDFS: setReplication on a directory is a no-op answering false
	}
	r, err := c.p.Short("replication", int64(st.GetReplication()), 1)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.SetReplication(c.ctx, &dfspb.SetReplicationRequest{Path: c.path, Replication: uint32(r)}); err != nil {
		return err
	}
	return c.json(boolean(true))
}

func (c *call) setOwner() error {
	owner, group := c.p.Str("owner"), c.p.Str("group")
	if owner == "" && group == "" {
		return IllegalArgument("Both owner and group are empty.")
	}
	if _, err := c.h.cfg.RPC.SetOwner(c.ctx, &dfspb.SetOwnerRequest{Path: c.path, Owner: owner, Group: group}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) setPermission() error {
	perm, err := c.p.Permission("permission", 0o755)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.SetPermission(c.ctx, &dfspb.SetPermissionRequest{Path: c.path, Permission: perm}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) setTimes() error {
	mtime, err := c.p.Long("modificationtime", -1, -1)
	if err != nil {
		return err
	}
	atime, err := c.p.Long("accesstime", -1, -1)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.SetTimes(c.ctx, &dfspb.SetTimesRequest{Path: c.path, MtimeMs: mtime, AtimeMs: atime}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) setQuota() error {
	ns, err := c.p.Long("namespacequota", math.MaxInt64, -1)
	if err != nil {
		return err
	}
	ds, err := c.p.Long("storagespacequota", math.MaxInt64, -1)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.SetQuota(c.ctx, &dfspb.SetQuotaRequest{Path: c.path, NsQuota: ns, DsQuota: ds}); err != nil {
		return err
	}
	return c.ok()
}

// delete answers {"boolean": false} for a missing path, as
// FileSystem.delete does.
func (c *call) delete() error {
	rec, err := c.p.Bool("recursive", false)
	if err != nil {
		return err
	}
	if c.path == "/" && rec {
		// HDFS refuses to delete the root: "Cannot delete /" is logged and
		// false answered.
		return c.json(boolean(false))
	}
	if _, err := c.h.cfg.RPC.Delete(c.ctx, &dfspb.DeleteRequest{Path: c.path, Recursive: rec}); err != nil {
		if FromError(err).Exception == "FileNotFoundException" {
			return c.json(boolean(false))
		}
		return err
	}
	return c.json(boolean(true))
}

// ---------------------------------------------------------------- redirects

// redirect sends CREATE, APPEND, OPEN and GETFILECHECKSUM to a datanode's
// HTTP port: 307 with Location, or 200 {"Location"} with noredirect=true.
// The URL carries the operation's parameters, a token the namenode
// signed for the authenticated user (delegation=) and the namenode's RPC
// address; never user.name or doas.
func (c *call) redirect() error {
	noRedirect, err := c.p.Bool("noredirect", false)
	if err != nil {
		return err
	}
	if err := c.checkRedirect(); err != nil {
		return err
	}
	dn, err := c.chooseDatanode()
	if err != nil {
		return err
	}
	q := c.p.Encode("user.name", "doas", "delegation", "noredirect", "namenoderpcaddress")
	tok := c.h.cfg.Auth.IssueRedirect(c.user, RedirectScope{Op: c.op, Path: c.path, Datanode: dn.GetId(), Via: presented(c.r, c.p)})
	extra := url.Values{"delegation": {tok}, "namenoderpcaddress": {c.h.cfg.NameNodeRPC}}.Encode()
	if q != "" {
		extra = q + "&" + extra
	}
	scheme := "http"
	if c.r.TLS != nil { // the datanodes serve TLS when the namenode does (one wire switch)
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(dn.GetIpAddr(), strconv.Itoa(int(dn.GetHttpPort()))),
		Path: Prefix + c.path, RawQuery: extra}
	loc := u.String()
	if noRedirect {
		return c.json(map[string]any{"Location": loc})
	}
	c.w.Header().Set("Location", loc)
	c.w.Header().Set("Content-Type", "application/octet-stream")
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusTemporaryRedirect)
	return nil
}

// checkRedirect checks what the namenode can before sending the client
// to a datanode, so bad parameters and missing files fail at step one.
func (c *call) checkRedirect() error {
	switch c.op {
	case "OPEN":
		if _, err := c.p.Long("offset", 0, 0); err != nil {
			return err
		}
		if _, err := c.p.Long("length", 0, 0); err != nil {
			return err
		}
		st, err := c.stat(c.path)
		if err != nil {
			return err
		}
		if st.GetType() == dfspb.FileType_DIRECTORY {
			return Exception("FileNotFoundException", fmt.Sprintf("Path is not a file: %s", c.path))
		}
	case "GETFILECHECKSUM", "APPEND":
		if _, err := c.stat(c.path); err != nil {
			return err
		}
	case "CREATE":
		if _, err := c.p.Bool("overwrite", false); err != nil {
			return err
		}
		if _, err := c.p.Permission("permission", 0o644); err != nil {
			return err
		}
		if _, err := c.p.Long("blocksize", 0, 1); err != nil {
			return err
		}
		if _, err := c.p.Short("replication", 0, 1); err != nil {
			return err
		}
	}
	return nil
}

// chooseDatanode picks where the bytes go: for reads the first replica the
// namenode lists for the client (it sorts them by distance) of the block
// at the offset; for writes the datanode on the client's host if there is
// one, else a random live datanode.
func (c *call) chooseDatanode() (*dfspb.DatanodeInfo, error) {
	if c.op == "OPEN" || c.op == "GETFILECHECKSUM" || c.op == "APPEND" {
		off, _ := c.p.Long("offset", 0, 0)
		if c.op == "APPEND" { // the block the append continues: the last
			st, err := c.stat(c.path)
			if err != nil {
				return nil, err
			}
			off = max(st.GetLength()-1, 0)
		}
		r, err := c.h.cfg.RPC.GetBlockLocations(c.ctx, &dfspb.GetBlockLocationsRequest{
			Path: c.path, Offset: off, Length: 1, ClientHost: clientHost(c.r)})
		if err != nil {
			return nil, err
		}
		blocks := r.GetLocations().GetBlocks()
		for _, lb := range blocks {
			for _, d := range lb.GetLocations() {
				if d.GetHttpPort() != 0 {
					return d, nil
				}
			}
		}
	}
	r, err := c.h.cfg.RPC.GetDatanodeReport(c.ctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
	if err != nil {
		return nil, err
	}
	var live []*dfspb.DatanodeInfo
	host := clientHost(c.r)
	for _, d := range r.GetDatanodes() {
		if d.GetHttpPort() == 0 {
			continue
		}
		if c.op == "CREATE" && (d.GetIpAddr() == host || d.GetHostname() == host) && !isLoopback(host) {
			return d, nil
		}
		live = append(live, d)
	}
	if len(live) == 0 {
		return nil, Exception("IOException", "Failed to find datanode, suggest to check cluster health. excludeDatanodes=null")
	}
	return live[rand.IntN(len(live))], nil
}

func clientHost(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// isLoopback: on one machine every datanode shares the client's address,
// so "the datanode on the client's host" would always be the first one.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
