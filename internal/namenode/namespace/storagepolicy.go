package namespace

import (
	"smarth/internal/fsattr"
)

// Storage policies as HDFS names and numbers them (the "Archival Storage,
// SSD & Memory" guide, BlockStoragePolicySuite). In smarth a policy is a
// stored attribute only: it is kept, inherited and reported, but block
// placement does not act on it yet (datanodes have one storage type).

// The policy table lives in internal/fsattr, which clients share.
type StoragePolicy = fsattr.StoragePolicy

const (
	PolicyUnspecified = fsattr.PolicyUnspecified
	PolicyHot         = fsattr.PolicyHot
)

var (
	StoragePolicies = fsattr.StoragePolicies
	PolicyByName    = fsattr.PolicyByName
	PolicyByID      = fsattr.PolicyByID
)

// SetStoragePolicy sets (id) or, with PolicyUnspecified, unsets the
// storage policy of a file or directory. As in HDFS the caller needs write
// access to it.
func (t *Tree) SetStoragePolicy(c Caller, path string, id uint8) error {
	op := "setStoragePolicy"
	if id == PolicyUnspecified {
		op = "unsetStoragePolicy"
	} else if _, ok := PolicyByID(id); !ok {
		return errorf(op, path, Invalid, "Cannot find a block policy with the id %d", id)
	}
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	if err := t.check(op, n.Path(), c, n, Write); err != nil {
		return err
	}
	if id == PolicyUnspecified {
		if t.policies != nil {
			delete(t.policies, n)
		}
		return nil
	}
	if t.policies == nil {
		t.policies = map[*INode]uint8{}
	}
	t.policies[n] = id
	return nil
}

// StoragePolicyOf is n's effective policy: its own, else its nearest
// ancestor's, else PolicyUnspecified (which means HOT).
func (t *Tree) StoragePolicyOf(n *INode) uint8 {
	if len(t.policies) == 0 {
		return PolicyUnspecified
	}
	for p := n; p != nil; p = p.Parent {
		if id, ok := t.policies[p]; ok {
			return id
		}
	}
	return PolicyUnspecified
}

// OwnStoragePolicy is the policy set on n itself (images).
func (t *Tree) OwnStoragePolicy(n *INode) (uint8, bool) {
	id, ok := t.policies[n]
	return id, ok
}

// RestoreStoragePolicy sets n's own policy from an image.
func (t *Tree) RestoreStoragePolicy(n *INode, id uint8) {
	if t.policies == nil {
		t.policies = map[*INode]uint8{}
	}
	t.policies[n] = id
}

// GetStoragePolicy returns the effective policy of path (HDFS
// getStoragePolicy), PolicyUnspecified when none is set on it or above.
func (t *Tree) GetStoragePolicy(c Caller, path string) (uint8, error) {
	n, err := t.Stat(c, "getStoragePolicy", path)
	if err != nil {
		return 0, err
	}
	return t.StoragePolicyOf(n), nil
}
