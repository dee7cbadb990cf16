package namespace

import (
	"strings"
)

// Storage policies as HDFS names and numbers them (the "Archival Storage,
// SSD & Memory" guide, BlockStoragePolicySuite). In smarth a policy is a
// stored attribute only: it is kept, inherited and reported, but block
// placement does not act on it yet (datanodes have one storage type).

// StoragePolicy is one of HDFS's built-in block storage policies.
type StoragePolicy struct {
	ID                   uint8
	Name                 string
	StorageTypes         []string // where the replicas go, in order
	CreationFallbacks    []string
	ReplicationFallbacks []string
	CopyOnCreateFile     bool
}

// PolicyUnspecified is the id of "no policy set here or above".
const PolicyUnspecified uint8 = 0

// HOT is the default policy (id 7).
const PolicyHot uint8 = 7

// StoragePolicies are HDFS's built-in policies, by id.
var StoragePolicies = []StoragePolicy{
	{ID: 1, Name: "PROVIDED", StorageTypes: []string{"PROVIDED", "DISK"}, CreationFallbacks: []string{"PROVIDED", "DISK"}, ReplicationFallbacks: []string{"PROVIDED", "DISK"}},
	{ID: 2, Name: "COLD", StorageTypes: []string{"ARCHIVE"}},
	{ID: 5, Name: "WARM", StorageTypes: []string{"DISK", "ARCHIVE"}, CreationFallbacks: []string{"DISK", "ARCHIVE"}, ReplicationFallbacks: []string{"DISK", "ARCHIVE"}},
	{ID: 7, Name: "HOT", StorageTypes: []string{"DISK"}, ReplicationFallbacks: []string{"ARCHIVE"}},
	{ID: 10, Name: "ONE_SSD", StorageTypes: []string{"SSD", "DISK"}, CreationFallbacks: []string{"SSD", "DISK"}, ReplicationFallbacks: []string{"SSD", "DISK"}},
	{ID: 12, Name: "ALL_SSD", StorageTypes: []string{"SSD"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}},
	{ID: 15, Name: "LAZY_PERSIST", StorageTypes: []string{"RAM_DISK", "DISK"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}, CopyOnCreateFile: false},
}

// PolicyByName finds a policy by name, ignoring case.
func PolicyByName(name string) (StoragePolicy, bool) {
	for _, p := range StoragePolicies {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

// PolicyByID finds a policy by id.
func PolicyByID(id uint8) (StoragePolicy, bool) {
	for _, p := range StoragePolicies {
		if p.ID == id {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

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
