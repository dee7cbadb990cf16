package fsstate

import (
	"smarth/internal/namenode/namespace"
)

// Records of the attribute operations added after the cache ones (times,
// quotas, extended attributes).

// SetTimes sets a path's modification and access times (unix ms, or
// namespace.KeepTime to leave one as it is).
type SetTimes struct {
	Path         string
	MTime, ATime int64
}

func (*SetTimes) Kind() Kind { return kindSetTimes }
func (r *SetTimes) encode(e *enc) {
	e.s(r.Path)
	e.i(r.MTime)
	e.i(r.ATime)
}
func (r *SetTimes) decode(d *dec) { r.Path, r.MTime, r.ATime = d.s(), d.i(), d.i() }
func (r *SetTimes) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.File, err = s.tree.SetTimes(c, r.Path, r.MTime, r.ATime)
	return res, err
}

// SetQuota sets a directory's name and space quotas: each a limit,
// namespace.QuotaReset or namespace.QuotaDontSet.
type SetQuota struct {
	Path             string
	NSQuota, DSQuota int64
}

func (*SetQuota) Kind() Kind { return kindSetQuota }
func (r *SetQuota) encode(e *enc) {
	e.s(r.Path)
	e.i(r.NSQuota)
	e.i(r.DSQuota)
}
func (r *SetQuota) decode(d *dec) { r.Path, r.NSQuota, r.DSQuota = d.s(), d.i(), d.i() }
func (r *SetQuota) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetQuota(c, r.Path, r.NSQuota, r.DSQuota)
}

// SetTypeQuota sets or clears one storage-type quota; a kind of its own,
// so that setQuota records of older journals decode unchanged.
type SetTypeQuota struct {
	Path        string
	StorageType string // a Hadoop StorageType name
	Quota       int64  // bytes, or namespace.QuotaReset
}

func (*SetTypeQuota) Kind() Kind { return kindSetTypeQuota }
func (r *SetTypeQuota) encode(e *enc) {
	e.s(r.Path)
	e.s(r.StorageType)
	e.i(r.Quota)
}
func (r *SetTypeQuota) decode(d *dec) { r.Path, r.StorageType, r.Quota = d.s(), d.s(), d.i() }
func (r *SetTypeQuota) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetTypeQuota(c, r.Path, r.StorageType, r.Quota)
}

// SetXAttr sets an extended attribute.
type SetXAttr struct {
	Path  string
	XAttr namespace.XAttr
	Flags namespace.XAttrFlag
}

func (*SetXAttr) Kind() Kind { return kindSetXAttr }
func (r *SetXAttr) encode(e *enc) {
	e.s(r.Path)
	e.s(r.XAttr.Name)
	e.s(string(r.XAttr.Value))
	e.u(uint64(r.Flags))
}
func (r *SetXAttr) decode(d *dec) {
	r.Path, r.XAttr.Name = d.s(), d.s()
	if v := d.s(); v != "" {
		r.XAttr.Value = []byte(v)
	}
	r.Flags = namespace.XAttrFlag(d.u())
}
func (r *SetXAttr) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetXAttr(c, r.Path, r.XAttr.Name, r.XAttr.Value, r.Flags)
}

// RemoveXAttr removes an extended attribute by name.
type RemoveXAttr struct {
	Path, Name string
}

func (*RemoveXAttr) Kind() Kind { return kindRemoveXAttr }
func (r *RemoveXAttr) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Name)
}
func (r *RemoveXAttr) decode(d *dec) { r.Path, r.Name = d.s(), d.s() }
func (r *RemoveXAttr) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.RemoveXAttr(c, r.Path, r.Name)
}
