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

// Verifier is the datanode's half: the namenode's key set, as last
// shipped, and the check. Until the first key set arrives nothing is
// allowed: the datanode cannot know yet whether tokens are required.
type Verifier struct {
	mu      sync.RWMutex // guards the fields below
	known   bool         // a key set (or "disabled") has arrived
	enabled bool
	keys    map[uint32]Key
	serial  uint64
}

// NewVerifier returns a verifier that refuses everything until Update.
func NewVerifier() *Verifier { return &Verifier{keys: map[uint32]Key{}} }

// Update installs the namenode's key set (nil: no change).
func (v *Verifier) Update(k *dfspb.ExportedBlockKeys, serial uint64) {
	if k == nil {
		return
	}
	keys := make(map[uint32]Key, len(k.GetKeys()))
	for _, bk := range k.GetKeys() {
		keys[bk.GetKeyId()] = Key{ID: bk.GetKeyId(), Expiry: time.UnixMilli(bk.GetExpiryUnixMs()), Secret: bk.GetSecret()}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.known, v.enabled, v.keys, v.serial = true, k.GetEnabled(), keys, serial
}

// Serial is the serial of the installed key set (0: none yet).
func (v *Verifier) Serial() uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.serial
}

// Enabled reports whether tokens are being checked.
func (v *Verifier) Enabled() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return !v.known || v.enabled
}

// Check verifies tok for want at now and returns its identifier. Every
// refusal wraps ErrDenied and says why.
func (v *Verifier) Check(tok *dfspb.BlockToken, want Want, now time.Time) (Identifier, error) {
	v.mu.RLock()
	known, enabled := v.known, v.enabled
	var key Key
	var haveKey bool
	var id Identifier
	var err error
	if len(tok.GetIdentifier()) > 0 {
		id, err = Unmarshal(tok.GetIdentifier())
		key, haveKey = v.keys[id.KeyID]
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
	case !haveKey:
		return id, fmt.Errorf("%w: signed with unknown block key %d (expired, or from another namenode)", ErrDenied, id.KeyID)
	case !hmac.Equal(sign(key.Secret, tok.GetIdentifier()), tok.GetPassword()):
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
