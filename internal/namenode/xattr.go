package namenode

import (
	"context"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// setXAttr sets an extended attribute (HDFS setXAttr). The namespace
// checks the name, the caller's rights, the flags and the limits.
func (nn *NameNode) setXAttr(ctx context.Context, req *dfspb.SetXAttrRequest) error {
	p, err := cleanPath("setXAttr", req.GetPath())
	if err != nil {
		return err
	}
	flags := namespace.XAttrFlag(req.GetFlags())
	if flags == 0 || flags&^(namespace.XAttrCreate|namespace.XAttrReplace) != 0 {
		return errInvalid("setXAttr %s: flags %d: a flag must be specified (CREATE = 1, REPLACE = 2)", p, req.GetFlags())
	}
	x := req.GetXattr()
	c := callerOf(ctx)
	op := &fsstate.SetXAttr{Path: p, XAttr: namespace.XAttr{Name: x.GetName(), Value: x.GetValue()}, Flags: flags}
	if n := namespace.NormalizeXAttrName(x.GetName()); n != "" {
		op.XAttr.Name = n // logged normalised
	}
	_, err = nn.mutateCall(loggedCall(ctx), "setXAttr", p, c, op, nil, nil)
	return err
}

// removeXAttr removes an extended attribute.
func (nn *NameNode) removeXAttr(ctx context.Context, req *dfspb.RemoveXAttrRequest) error {
	p, err := cleanPath("removeXAttr", req.GetPath())
	if err != nil {
		return err
	}
	c := callerOf(ctx)
	op := &fsstate.RemoveXAttr{Path: p, Name: req.GetName()}
	if n := namespace.NormalizeXAttrName(req.GetName()); n != "" {
		op.Name = n
	}
	_, err = nn.mutateCall(loggedCall(ctx), "removeXAttr", p, c, op, nil, nil)
	return err
}

func (nn *NameNode) getXAttrs(ctx context.Context, req *dfspb.GetXAttrsRequest) (*dfspb.GetXAttrsResponse, error) {
	p, err := cleanPath("getXAttrs", req.GetPath())
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	xs, err := nn.state.Tree().GetXAttrs(callerOf(ctx), p, req.GetNames())
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.GetXAttrsResponse{}
	for _, x := range xs {
		resp.Xattrs = append(resp.Xattrs, &dfspb.XAttr{Name: x.Name, Value: x.Value})
	}
	return resp, nil
}

func (nn *NameNode) listXAttrs(ctx context.Context, req *dfspb.ListXAttrsRequest) (*dfspb.ListXAttrsResponse, error) {
	p, err := cleanPath("listXAttrs", req.GetPath())
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	names, err := nn.state.Tree().ListXAttrs(callerOf(ctx), p)
	if err != nil {
		return nil, statusOf(err)
	}
	return &dfspb.ListXAttrsResponse{Names: names}, nil
}
