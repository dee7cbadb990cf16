package resourcemanager

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// asUser is the context of an RPC from user, as the server receives it.
func asUser(user string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(mdUser, user))
}
