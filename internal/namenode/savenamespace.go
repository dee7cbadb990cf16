package namenode

import (
	"context"

	"smarth/internal/rpc/dfspb"
)

// SaveNamespace (HDFS's dfsadmin -saveNamespace) writes a checkpoint
// image now and trims the edit log, so an administrator can make the
// next start fast, or have a fresh image on disk before an upgrade or a
// backup, without waiting for checkpoint_txns or checkpoint_period. The
// superuser rule is authz.go's. As HDFS, it needs safe mode: with no
// mutations accepted, the image is the namespace at the moment the
// administrator chose, not one taken while writers move on.
func (s *clientRPC) SaveNamespace(ctx context.Context, _ *dfspb.SaveNamespaceRequest) (*dfspb.SaveNamespaceResponse, error) {
	tx, err := s.nn.saveNamespace()
	if err != nil {
		return nil, err
	}
	return &dfspb.SaveNamespaceResponse{Txid: tx}, nil
}

func (nn *NameNode) saveNamespace() (uint64, error) {
	nn.mu.Lock()
	on := nn.safe.on
	nn.mu.Unlock()
	if !on {
		// HDFS's FSNamesystem.saveNamespace text.
		return 0, errPrecondition("Safe mode should be turned ON in order to create namespace image.")
	}
	if err := nn.checkpoint(); err != nil {
		return 0, errUnavailable("saveNamespace: %v", err)
	}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return nn.ckptTx, nil
}
