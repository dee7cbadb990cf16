package fsstate

import (
	"fmt"

	"smarth/internal/namenode/namespace"
)

// Kind numbers the edit-log records. Never renumber: they are on disk.
type Kind uint8

// The kinds in blocks: the first from 1; ACLs, storage policies and
// snapshots from 48; rename2 at 72, setTypeQuota at 80. Each block was
// numbered apart so that records added to one never collided on disk with
// another's.
const (
	kindMkdirs Kind = iota + 1
	kindCreate
	kindAddBlock
	kindComplete
	kindAbandonBlock
	kindAllocGS
	kindUpdateBlock
	kindDelete
	kindRename
	kindSetReplication
	kindSetPermission
	kindSetOwner
	kindCommitSync
	kindCloseFile
	kindAddCachePool
	kindRemoveCachePool
	kindAddCacheDirective
	kindRemoveCacheDirective
	kindSetTimes
	kindSetQuota
	kindSetXAttr
	kindRemoveXAttr
	kindAppend
	kindTruncate
	kindConcat
)

const (
	kindACL Kind = 48 + iota
	kindSetStoragePolicy
	kindAllowSnapshot
	kindDisallowSnapshot
	kindCreateSnapshot
	kindDeleteSnapshot
	kindRenameSnapshot
)

const (
	kindRename2      Kind = 72
	kindSetTypeQuota Kind = 80
)

// kinds lists every record: its name (in logs and metrics) and a
// constructor for Decode.
var kinds = map[Kind]struct {
	name string
	new  func() Record
}{
	kindMkdirs:               {"mkdirs", func() Record { return new(Mkdirs) }},
	kindCreate:               {"create", func() Record { return new(Create) }},
	kindAddBlock:             {"addBlock", func() Record { return new(AddBlock) }},
	kindComplete:             {"complete", func() Record { return new(Complete) }},
	kindAbandonBlock:         {"abandonBlock", func() Record { return new(AbandonBlock) }},
	kindAllocGS:              {"allocGS", func() Record { return new(AllocGS) }},
	kindUpdateBlock:          {"updateBlock", func() Record { return new(UpdateBlock) }},
	kindDelete:               {"delete", func() Record { return new(Delete) }},
	kindRename:               {"rename", func() Record { return new(Rename) }},
	kindSetReplication:       {"setReplication", func() Record { return new(SetReplication) }},
	kindSetPermission:        {"setPermission", func() Record { return new(SetPermission) }},
	kindSetOwner:             {"setOwner", func() Record { return new(SetOwner) }},
	kindCommitSync:           {"commitBlockSync", func() Record { return new(CommitSync) }},
	kindCloseFile:            {"closeFile", func() Record { return new(CloseFile) }},
	kindAddCachePool:         {"addCachePool", func() Record { return new(AddCachePool) }},
	kindRemoveCachePool:      {"removeCachePool", func() Record { return new(RemoveCachePool) }},
	kindAddCacheDirective:    {"addCacheDirective", func() Record { return new(AddCacheDirective) }},
	kindRemoveCacheDirective: {"removeCacheDirective", func() Record { return new(RemoveCacheDirective) }},
	kindSetTimes:             {"setTimes", func() Record { return new(SetTimes) }},
	kindSetQuota:             {"setQuota", func() Record { return new(SetQuota) }},
	kindSetXAttr:             {"setXAttr", func() Record { return new(SetXAttr) }},
	kindRemoveXAttr:          {"removeXAttr", func() Record { return new(RemoveXAttr) }},
	kindAppend:               {"append", func() Record { return new(Append) }},
	kindTruncate:             {"truncate", func() Record { return new(Truncate) }},
	kindConcat:               {"concat", func() Record { return new(Concat) }},
	kindACL:                  {"acl", func() Record { return new(ACL) }},
	kindSetStoragePolicy:     {"setStoragePolicy", func() Record { return new(SetStoragePolicy) }},
	kindAllowSnapshot:        {"allowSnapshot", func() Record { return new(AllowSnapshot) }},
	kindDisallowSnapshot:     {"disallowSnapshot", func() Record { return new(DisallowSnapshot) }},
	kindCreateSnapshot:       {"createSnapshot", func() Record { return new(CreateSnapshot) }},
	kindDeleteSnapshot:       {"deleteSnapshot", func() Record { return new(DeleteSnapshot) }},
	kindRenameSnapshot:       {"renameSnapshot", func() Record { return new(RenameSnapshot) }},
	kindRename2:              {"rename2", func() Record { return new(Rename2) }},
	kindSetTypeQuota:         {"setTypeQuota", func() Record { return new(SetTypeQuota) }},
	kindCall:                 {"call", func() Record { return new(Call) }},
	kindRenewToken:           {"renewDelegationToken", func() Record { return new(RenewToken) }},
	kindCancelToken:          {"cancelDelegationToken", func() Record { return new(CancelToken) }},
}

func (k Kind) String() string {
	if r, ok := kinds[k]; ok {
		return r.name
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// Record is one logged namespace mutation. Each kind is a type of its own
// holding only its fields; a record carries everything needed to apply it
// again identically (times, ids, stamps), so replay never consults the
// clock or counters.
type Record interface {
	Kind() Kind
	// encode writes the fields after the kind byte; decode reads them
	// back, bounded by what is left (see dec.count).
	encode(e *enc)
	decode(d *dec)
	// apply changes the state; State.Apply wraps it with what every
	// record shares (space charges, blocks leaving the map).
	apply(s *State, c namespace.Caller) (Applied, error)
}

// Timed is a record that carries the time of its operation: the live
// path stamps it (under its lock, in log order) just before applying it.
type Timed interface {
	Record
	SetNow(unixMs int64)
}

// owned is a record that names the user it acts for, which replay must
// act for too (the owner of what it makes).
type owned interface{ owner() string }

// Encode is r's edit-log payload: the kind byte, then r's fields.
func Encode(r Record) []byte {
	e := enc{b: make([]byte, 1, 64)}
	e.b[0] = byte(r.Kind())
	r.encode(&e)
	return e.b
}

// Decode parses a payload written by Encode.
func Decode(b []byte) (Record, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty edit record")
	}
	k, ok := kinds[Kind(b[0])]
	if !ok {
		return nil, fmt.Errorf("unknown edit op %d", b[0])
	}
	r := k.new()
	d := &dec{b: b[1:]}
	r.decode(d)
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("edit op %s: %w", r.Kind(), err)
	}
	return r, nil
}

// BlockRef is a block's id, stamp and length in a record.
type BlockRef struct {
	ID  uint64
	GS  uint64
	Len int64
}

func encRef(e *enc, b BlockRef) {
	e.u(b.ID)
	e.u(b.GS)
	e.i(b.Len)
}

func decRef(d *dec) BlockRef { return BlockRef{ID: d.u(), GS: d.u(), Len: d.i()} }

// Mkdirs makes a directory, and its missing parents with CreateParent.
type Mkdirs struct {
	Path             string
	Perm, ParentPerm uint32
	CreateParent     bool
	User             string // the owner of what it makes
	Now              int64  // unix ms
}

func (*Mkdirs) Kind() Kind        { return kindMkdirs }
func (r *Mkdirs) SetNow(ms int64) { r.Now = ms }
func (r *Mkdirs) owner() string   { return r.User }
func (r *Mkdirs) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Perm))
	e.u(uint64(r.ParentPerm))
	e.bool(r.CreateParent)
	e.s(r.User)
	e.i(r.Now)
}
func (r *Mkdirs) decode(d *dec) {
	r.Path, r.Perm, r.ParentPerm = d.s(), uint32(d.u()), uint32(d.u())
	r.CreateParent, r.User, r.Now = d.bool(), d.s(), d.i()
}
func (r *Mkdirs) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.Mkdirs(c, r.Path, uint16(r.Perm), uint16(r.ParentPerm), r.CreateParent, r.Now)
}

// Create makes a file open for writing by Client, replacing an existing
// one with Overwrite.
type Create struct {
	Path                    string
	Perm, ParentPerm        uint32
	CreateParent, Overwrite bool
	Replication             int
	BlockSize               int64
	User, Client, Host      string
	Now                     int64
}

func (*Create) Kind() Kind        { return kindCreate }
func (r *Create) SetNow(ms int64) { r.Now = ms }
func (r *Create) owner() string   { return r.User }
func (r *Create) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Perm))
	e.u(uint64(r.ParentPerm))
	e.bool(r.CreateParent)
	e.bool(r.Overwrite)
	e.u(uint64(r.Replication))
	e.i(r.BlockSize)
	e.s(r.User)
	e.s(r.Client)
	e.s(r.Host)
	e.i(r.Now)
}
func (r *Create) decode(d *dec) {
	r.Path, r.Perm, r.ParentPerm = d.s(), uint32(d.u()), uint32(d.u())
	r.CreateParent, r.Overwrite = d.bool(), d.bool()
	r.Replication, r.BlockSize = int(d.u()), d.i()
	r.User, r.Client, r.Host, r.Now = d.s(), d.s(), d.s(), d.i()
}
func (r *Create) apply(s *State, c namespace.Caller) (Applied, error) {
	f, replaced, err := s.tree.Create(c, r.Path, namespace.CreateOptions{
		Perm: uint16(r.Perm), ParentPerm: uint16(r.ParentPerm), Replication: r.Replication,
		BlockSize: r.BlockSize, Writer: namespace.Writer{Client: r.Client, Host: r.Host, User: r.User},
		Overwrite: r.Overwrite, CreateParent: r.CreateParent,
	}, r.Now)
	res := Applied{File: f}
	if replaced != nil {
		res.Removed = []*namespace.INode{replaced}
		res.Dropped = s.dropFiles(res.Removed)
	}
	return res, err
}

// Delete removes a file or a directory (a non-empty one with Recursive).
type Delete struct {
	Path      string
	Recursive bool
	Now       int64
}

func (*Delete) Kind() Kind        { return kindDelete }
func (r *Delete) SetNow(ms int64) { r.Now = ms }
func (r *Delete) encode(e *enc) {
	e.s(r.Path)
	e.bool(r.Recursive)
	e.i(r.Now)
}
func (r *Delete) decode(d *dec) { r.Path, r.Recursive, r.Now = d.s(), d.bool(), d.i() }
func (r *Delete) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.Removed, err = s.tree.Delete(c, r.Path, r.Recursive, r.Now)
	res.Dropped = s.dropFiles(res.Removed)
	return res, err
}

// Rename moves Path to Dst (into it, when Dst is a directory).
type Rename struct {
	Path, Dst string
	Now       int64
}

func (*Rename) Kind() Kind        { return kindRename }
func (r *Rename) SetNow(ms int64) { r.Now = ms }
func (r *Rename) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Dst)
	e.i(r.Now)
}
func (r *Rename) decode(d *dec) { r.Path, r.Dst, r.Now = d.s(), d.s(), d.i() }
func (r *Rename) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.Path, err = s.tree.Rename(c, r.Path, r.Dst, r.Now)
	return res, err
}

// Rename2 is HDFS's rename with Options.Rename: one record, so a rename
// with Overwrite replaces its destination atomically, live and on replay.
type Rename2 struct {
	Path, Dst string
	Overwrite bool
	Now       int64
}

func (*Rename2) Kind() Kind        { return kindRename2 }
func (r *Rename2) SetNow(ms int64) { r.Now = ms }
func (r *Rename2) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Dst)
	e.bool(r.Overwrite)
	e.i(r.Now)
}
func (r *Rename2) decode(d *dec) { r.Path, r.Dst, r.Overwrite, r.Now = d.s(), d.s(), d.bool(), d.i() }
func (r *Rename2) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.Path, res.Removed, err = s.tree.Rename2(c, r.Path, r.Dst, r.Overwrite, r.Now)
	res.Dropped = s.dropFiles(res.Removed)
	return res, err
}

// SetReplication changes a file's replication and its blocks' expected
// replica count.
type SetReplication struct {
	Path        string
	Replication int
}

func (*SetReplication) Kind() Kind { return kindSetReplication }
func (r *SetReplication) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Replication))
}
func (r *SetReplication) decode(d *dec) { r.Path, r.Replication = d.s(), int(d.u()) }
func (r *SetReplication) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.File, err = s.tree.SetReplication(c, r.Path, r.Replication)
	if err == nil {
		for _, b := range res.File.Blocks {
			b.Expected = r.Replication
		}
	}
	return res, err
}

// SetPermission changes a path's mode bits.
type SetPermission struct {
	Path string
	Perm uint32
}

func (*SetPermission) Kind() Kind { return kindSetPermission }
func (r *SetPermission) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Perm))
}
func (r *SetPermission) decode(d *dec) { r.Path, r.Perm = d.s(), uint32(d.u()) }
func (r *SetPermission) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetPermission(c, r.Path, uint16(r.Perm))
}

// SetOwner changes a path's owner and group (an empty one is kept).
type SetOwner struct {
	Path, Owner, Group string
}

func (*SetOwner) Kind() Kind { return kindSetOwner }
func (r *SetOwner) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Owner)
	e.s(r.Group)
}
func (r *SetOwner) decode(d *dec) { r.Path, r.Owner, r.Group = d.s(), d.s(), d.s() }
func (r *SetOwner) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetOwner(c, r.Path, r.Owner, r.Group)
}
