package blocktoken

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"smarth/internal/rpc/dfspb"
)

// ErrDenied is wrapped by every refusal of a token: missing, forged,
// expired, signed with an unknown key, or for another block, stamp, mode
// or target.
var ErrDenied = errors.New("block access token rejected")

// Want is what an op needs a token to allow.
type Want struct {
	BlockID uint64
	GS      uint64
	Mode    Mode
	// Dials are the data addresses the op makes this datanode connect
	// to; each must be among the token's targets.
	Dials []string
}

// Verifier is the datanode's half: the namenodes' key sets, as last
// shipped, and the check. Until the first key set arrives nothing is
// allowed: the datanode cannot know yet whether tokens are required.
// A datanode of an HA group holds the set of every namenode (UpdateFrom),
// as HDFS's datanode adds every namenode's keys: a token signed by any of
// them is honoured, whichever namenode the client asked.
type Verifier struct {
	mu      sync.RWMutex       // guards the fields below
	sources map[string]*keySet // by namenode ("" for the one of Update)
}

type keySet struct {
	enabled bool
	keys    map[uint32]Key
	serial  uint64
}

// NewVerifier returns a verifier that refuses everything until Update.
func NewVerifier() *Verifier { return &Verifier{sources: map[string]*keySet{}} }

// Update installs the namenode's key set (nil: no change).
func (v *Verifier) Update(k *dfspb.ExportedBlockKeys, serial uint64) { v.UpdateFrom("", k, serial) }

// UpdateFrom installs the key set of the namenode named source (nil: no
// change), replacing only that namenode's previous set.
func (v *Verifier) UpdateFrom(source string, k *dfspb.ExportedBlockKeys, serial uint64) {
	if k == nil {
		return
	}
	keys := make(map[uint32]Key, len(k.GetKeys()))
	for _, bk := range k.GetKeys() {
		keys[bk.GetKeyId()] = Key{ID: bk.GetKeyId(), Expiry: time.UnixMilli(bk.GetExpiryUnixMs()), Secret: bk.GetSecret()}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sources[source] = &keySet{enabled: k.GetEnabled(), keys: keys, serial: serial}
}

// Serial is the serial of the installed key set (0: none yet).
func (v *Verifier) Serial() uint64 { return v.SerialOf("") }

// SerialOf is the serial of source's key set (0: none yet).
func (v *Verifier) SerialOf(source string) uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if ks := v.sources[source]; ks != nil {
		return ks.serial
	}
	return 0
}

// Enabled reports whether tokens are being checked: until a key set
// arrives, and then when any namenode says so (one that enforces tokens
// is not overruled by one that does not).
func (v *Verifier) Enabled() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.enabledLocked()
}

func (v *Verifier) enabledLocked() bool {
	if len(v.sources) == 0 {
		return true
	}
	for _, ks := range v.sources {
		if ks.enabled {
			return true
		}
	}
	return false
}

// keysLocked finds key id in every namenode's set: namenodes of a group
// that share their keys hold the same one; ones that do not might reuse
// an id, and a token signed with either is then honoured.
func (v *Verifier) keysLocked(id uint32) []Key {
	var out []Key
	for _, ks := range v.sources {
		if k, ok := ks.keys[id]; ok {
			out = append(out, k)
		}
	}
	return out
}

// signedBy reports whether tok's password is the signature of one of keys.
func signedBy(keys []Key, tok *dfspb.BlockToken) bool {
	for _, k := range keys {
		if hmac.Equal(sign(k.Secret, tok.GetIdentifier()), tok.GetPassword()) {
			return true
		}
	}
	return false
}

// Check verifies tok for want at now and returns its identifier. Every
// refusal wraps ErrDenied and says why.
func (v *Verifier) Check(tok *dfspb.BlockToken, want Want, now time.Time) (Identifier, error) {
	v.mu.RLock()
	known, enabled := len(v.sources) > 0, v.enabledLocked()
	var keys []Key
	var id Identifier
	var err error
	if len(tok.GetIdentifier()) > 0 {
		id, err = Unmarshal(tok.GetIdentifier())
		keys = v.keysLocked(id.KeyID)
	}
	v.mu.RUnlock()
	switch {
	case !known:
		return id, fmt.Errorf("%w: this datanode has no block keys from the namenode yet (not registered)", ErrDenied)
	case !enabled:
		return id, nil
	case len(tok.GetIdentifier()) == 0:
		return id, fmt.Errorf("%w: no token for block %d (%s access needs one from the namenode)", ErrDenied, want.BlockID, want.Mode)
	case err != nil:
		return id, fmt.Errorf("%w: %v", ErrDenied, err)
	case len(keys) == 0:
		return id, fmt.Errorf("%w: signed with unknown block key %d (expired, or from another namenode)", ErrDenied, id.KeyID)
	case !signedBy(keys, tok):
		return id, fmt.Errorf("%w: bad signature for block %d", ErrDenied, id.BlockID)
	}
	return id, check(id, want, now)
}

// check compares a genuine identifier with what the op needs.
func check(id Identifier, want Want, now time.Time) error {
	if exp := time.UnixMilli(id.ExpiryUnixMs); now.After(exp) {
		return fmt.Errorf("%w: token for block %d expired at %s", ErrDenied, id.BlockID, exp.UTC().Format(time.RFC3339))
	}
	if id.BlockID != want.BlockID {
		return fmt.Errorf("%w: token is for block %d, not %d", ErrDenied, id.BlockID, want.BlockID)
	}
	if id.GS != want.GS {
		return fmt.Errorf("%w: token is for block %d generation stamp %d, not %d", ErrDenied, id.BlockID, id.GS, want.GS)
	}
	if id.Modes&want.Mode != want.Mode {
		return fmt.Errorf("%w: token for block %d allows %s, not %s", ErrDenied, id.BlockID, id.Modes, want.Mode)
	}
	for _, d := range want.Dials {
		if !slices.Contains(id.Targets, d) {
			return fmt.Errorf("%w: token for block %d does not name %s as a target (the namenode did not choose it)", ErrDenied, id.BlockID, d)
		}
	}
	return nil
}
