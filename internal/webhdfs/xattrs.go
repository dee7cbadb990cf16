package webhdfs

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"smarth/internal/auth"
	"strings"

	"smarth/internal/rpc/dfspb"
)

// XAttr values travel in Hadoop's XAttrCodec forms: "text" in double
// quotes, 0x-prefixed hex, or 0s-prefixed base64.

// EncodeXAttr renders value in encoding (text, hex or base64).
func EncodeXAttr(value []byte, encoding string) (string, error) {
	switch strings.ToLower(encoding) {
	case "text", "":
		return `"` + string(value) + `"`, nil
	case "hex":
		return "0x" + hex.EncodeToString(value), nil
	case "base64":
		return "0s" + base64.StdEncoding.EncodeToString(value), nil
	}
	return "", paramError("encoding", fmt.Sprintf("No enum constant org.apache.hadoop.fs.XAttrCodec.%s", strings.ToUpper(encoding)))
}

// DecodeXAttr parses a value in any of the forms; a bare string is its
// own bytes, as XAttrCodec.decodeValue takes it.
func DecodeXAttr(s string) ([]byte, error) {
	switch {
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		return []byte(s[1 : len(s)-1]), nil
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		b, err := hex.DecodeString(s[2:])
		if err != nil {
			return nil, paramError("xattr.value", "Invalid hex value: "+err.Error())
		}
		return b, nil
	case len(s) >= 2 && (s[:2] == "0s" || s[:2] == "0S"):
		b, err := base64.StdEncoding.DecodeString(s[2:])
		if err != nil {
			return nil, paramError("xattr.value", "Invalid base64 value: "+err.Error())
		}
		return b, nil
	}
	return []byte(s), nil
}

func (c *call) getXAttrs() error {
	enc := c.p.Str("encoding")
	if _, err := EncodeXAttr(nil, enc); err != nil {
		return err
	}
	r, err := c.h.cfg.RPC.GetXAttrs(c.ctx, &dfspb.GetXAttrsRequest{Path: c.path, Names: c.p.All("xattr.name")})
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, x := range r.GetXattrs() {
		v, _ := EncodeXAttr(x.GetValue(), enc)
		out = append(out, map[string]any{"name": x.GetName(), "value": v})
	}
	return c.json(map[string]any{"XAttrs": out})
}

// listXAttrs answers {"XAttrNames": "<a JSON array in a string>"}, as the
// WebHDFS page shows.
func (c *call) listXAttrs() error {
	r, err := c.h.cfg.RPC.ListXAttrs(c.ctx, &dfspb.ListXAttrsRequest{Path: c.path})
	if err != nil {
		return err
	}
	names := r.GetNames()
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return c.json(map[string]any{"XAttrNames": string(b)})
}

// xattrFlags parses flag=CREATE,REPLACE into dfs.proto's bits.
func xattrFlags(s string) (uint32, error) {
	var f uint32
	for _, v := range strings.Split(s, ",") {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "":
		case "CREATE":
			f |= 1
		case "REPLACE":
			f |= 2
		default:
			return 0, paramError("flag", fmt.Sprintf("No enum constant org.apache.hadoop.fs.XAttrSetFlag.%s", strings.ToUpper(v)))
		}
	}
	return f, nil
}

func (c *call) setXAttr() error {
	name := c.p.Str("xattr.name")
	if name == "" {
		return paramError("xattr.name", "XAttr name cannot be null.")
	}
	value, err := DecodeXAttr(c.p.Str("xattr.value"))
	if err != nil {
		return err
	}
	flags, err := xattrFlags(c.p.Str("flag"))
	if err != nil {
		return err
	}
	_, err = c.h.cfg.RPC.SetXAttr(c.ctx, &dfspb.SetXAttrRequest{Path: c.path, Xattr: &dfspb.XAttr{Name: name, Value: value}, Flags: flags})
	if err != nil {
		return err
	}
	return c.ok()
}

func (c *call) removeXAttr() error {
	name := c.p.Str("xattr.name")
	if name == "" {
		return paramError("xattr.name", "XAttr name cannot be null.")
	}
	if _, err := c.h.cfg.RPC.RemoveXAttr(c.ctx, &dfspb.RemoveXAttrRequest{Path: c.path, Name: name}); err != nil {
		return err
	}
	return c.ok()
}

// ---------------------------------------------------------------- delegation tokens

// getDelegationToken answers {"Token": {"urlString": ...}}, or
// {"Token": null} in simple mode as a Hadoop namenode without security
// does. A token cannot be had with a token: the caller must prove itself
// with its own credential (Hadoop: Kerberos).
func (c *call) getDelegationToken() error {
	if c.p.Has("delegation") {
		return IllegalArgument("delegation parameter is not null.")
	}
	if err := c.notByToken("issued"); err != nil {
		return err
	}
	renewer, err := c.p.User("renewer")
	if err != nil {
		return err
	}
	if renewer == "" {
		renewer = c.user
	}
	kind := auth.KindWebHDFS
	if c.r.TLS != nil {
		kind = auth.KindSWebHDFS
	}
	tok, err := c.h.cfg.Auth.IssueDelegation(c.user, renewer, kind, c.h.cfg.NameNodeRPC)
	if err != nil {
		return err
	}
	if tok == "" {
		return c.json(map[string]any{"Token": nil})
	}
	return c.json(map[string]any{"Token": map[string]any{"urlString": tok}})
}

func (c *call) token() (string, error) {
	t := c.p.Str("token")
	if t == "" {
		return "", paramError("token", "token is required")
	}
	return t, nil
}

// notByToken refuses a token operation to a caller who proved itself
// with a token (a delegation token, or a redirect token from a leaked
// URL, sent as a Bearer credential): otherwise one token could mint or
// extend another and outlive its maximum lifetime and its cancellation.
// Hadoop asks for Kerberos or web authentication here.
func (c *call) notByToken(what string) error {
	if c.h.cfg.Auth.Secure() && auth.IsToken(presented(c.r, c.p)) {
		return Exception("AccessControlException", "Delegation Token can be "+what+" only with your own credential, not with a token")
	}
	return nil
}

func (c *call) renewDelegationToken() error {
	if err := c.notByToken("renewed"); err != nil {
		return err
	}
	t, err := c.token()
	if err != nil {
		return err
	}
	exp, err := c.h.cfg.Auth.Renew(t, c.user)
	if err != nil {
		return err
	}
	return c.json(map[string]any{"long": exp})
}

func (c *call) cancelDelegationToken() error {
	t, err := c.token()
	if err != nil {
		return err
	}
	if err := c.h.cfg.Auth.Cancel(t, c.user); err != nil {
		return err
	}
	return c.ok()
}
