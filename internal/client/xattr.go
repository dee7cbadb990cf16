package client

import (
	"context"

	"smarth/internal/rpc/dfspb"
)

// XAttr is an extended attribute: a name with its namespace prefix
// ("user.", or "trusted." for superusers) and a value.
type XAttr struct {
	Name  string
	Value []byte
}

// XAttrFlag says what SetXAttr may do (HDFS XAttrSetFlag).
type XAttrFlag uint32

const (
	XAttrCreate  XAttrFlag = 1 // add an attribute that is not there
	XAttrReplace XAttrFlag = 2 // replace one that is
)

// SetXAttr sets an extended attribute of p (flags: XAttrCreate,
// XAttrReplace or both, as HDFS's FileSystem.setXAttr uses by default).
func (f *FileSystem) SetXAttr(ctx context.Context, p, name string, value []byte, flags XAttrFlag) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	req := &dfspb.SetXAttrRequest{Path: p, Xattr: &dfspb.XAttr{Name: name, Value: value}, Flags: uint32(flags)}
	if _, err := f.nn.SetXAttr(ctx, req); err != nil {
		return mapError("setfattr", p, err)
	}
	return nil
}

// RemoveXAttr removes an extended attribute of p.
func (f *FileSystem) RemoveXAttr(ctx context.Context, p, name string) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if _, err := f.nn.RemoveXAttr(ctx, &dfspb.RemoveXAttrRequest{Path: p, Name: name}); err != nil {
		return mapError("setfattr", p, err)
	}
	return nil
}

// GetXAttrs returns the named attributes of p, or with no names all those
// the caller may see, in name order. A named attribute that is missing is
// an fs.ErrNotExist error.
func (f *FileSystem) GetXAttrs(ctx context.Context, p string, names ...string) ([]XAttr, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	r, err := f.nn.GetXAttrs(ctx, &dfspb.GetXAttrsRequest{Path: p, Names: names})
	if err != nil {
		return nil, mapError("getfattr", p, err)
	}
	out := make([]XAttr, len(r.GetXattrs()))
	for i, x := range r.GetXattrs() {
		out[i] = XAttr{Name: x.GetName(), Value: x.GetValue()}
	}
	return out, nil
}

// ListXAttrs returns the names of p's attributes the caller may see.
func (f *FileSystem) ListXAttrs(ctx context.Context, p string) ([]string, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	r, err := f.nn.ListXAttrs(ctx, &dfspb.ListXAttrsRequest{Path: p})
	if err != nil {
		return nil, mapError("getfattr", p, err)
	}
	return r.GetNames(), nil
}
