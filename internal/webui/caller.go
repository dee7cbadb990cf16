package webui

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
)

// AnonymousUser is who a web request is in simple mode when it names no
// user: Hadoop's pseudo authentication's anonymous user, who owns no job.
const AnonymousUser = "dr.who"

// CallerContext is r's context carrying the caller's proof as incoming
// RPC metadata, so a daemon establishes a web caller with the very
// Identify that establishes its RPC callers, and a node manager can hand
// the proof on to the resource manager (OutgoingCaller):
//
//   - Authorization: Bearer <credential> (a token file's contents), as
//     WebHDFS and `smarth job logs` send it;
//   - HTTP basic auth whose password is that credential (the user name is
//     not trusted: the credential names its user), so a browser's sign-in
//     prompt works on every page without JavaScript;
//   - in simple mode, ?user.name= (else AnonymousUser), which a secure
//     daemon ignores.
func CallerContext(r *http.Request) context.Context {
	return metadata.NewIncomingContext(r.Context(), callerMD(r))
}

// OutgoingCaller is ctx carrying r's caller proof to an RPC the daemon
// makes on the caller's behalf.
func OutgoingCaller(ctx context.Context, r *http.Request) context.Context {
	return metadata.NewOutgoingContext(ctx, callerMD(r))
}

func callerMD(r *http.Request) metadata.MD {
	var c auth.Caller
	h := r.Header.Get("Authorization")
	if cred, ok := strings.CutPrefix(h, "Bearer "); ok && cred != "" {
		c.Credential = strings.TrimSpace(cred)
	} else if _, pw, ok := r.BasicAuth(); ok && pw != "" {
		c.Credential = strings.TrimSpace(pw)
	}
	c.User = r.URL.Query().Get("user.name")
	if c.User == "" {
		c.User = AnonymousUser
	}
	return c.MD()
}

// DenyCaller answers a request whose caller the daemon refused, by the
// refusal's gRPC code: Unauthenticated is 401 with a basic-auth challenge
// (a browser then asks for the credential), PermissionDenied 403,
// NotFound 404, anything else 500. It says what to send.
func DenyCaller(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch status.Code(err) {
	case codes.Unauthenticated:
		code = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="smarth", charset="UTF-8"`)
	case codes.PermissionDenied:
		code = http.StatusForbidden
	case codes.NotFound:
		code = http.StatusNotFound
	}
	msg := status.Convert(err).Message()
	if code == http.StatusUnauthorized {
		msg += "\nsign in: send your token file's contents as \"Authorization: Bearer <credential>\", or as the password when the browser asks"
	}
	http.Error(w, msg, code)
}
