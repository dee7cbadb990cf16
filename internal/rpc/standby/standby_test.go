package standby

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRefusalRoundTrip(t *testing.T) {
	err := Error(Write, "10.0.0.2:8020")
	if status.Code(err) != codes.Unavailable {
		t.Errorf("code %v, want Unavailable", status.Code(err))
	}
	want := "Operation category WRITE is not supported in state standby. Visit https://s.apache.org/sbnn-error; the active namenode is 10.0.0.2:8020"
	if status.Convert(err).Message() != want {
		t.Errorf("message %q, want %q", status.Convert(err).Message(), want)
	}
	for _, e := range []error{err, fmt.Errorf("create /x: %w", err), errors.New("create /x: " + status.Convert(err).Message())} {
		if a, ok := Is(e); !ok || a != "10.0.0.2:8020" {
			t.Errorf("Is(%v) = %q, %v; want the active named", e, a, ok)
		}
	}
	if a, ok := Is(Error(Read, "")); !ok || a != "" {
		t.Errorf("a refusal naming no active: %q, %v", a, ok)
	}
	for _, e := range []error{nil, errors.New("boom"), status.Error(codes.Unavailable, "safe mode is on")} {
		if _, ok := Is(e); ok {
			t.Errorf("Is(%v) took it for a standby's refusal", e)
		}
	}
}
