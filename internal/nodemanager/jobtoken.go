package nodemanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"smarth/internal/auth"
)

// jobTokens are the delegation tokens a node manager hands its
// containers: one per job, for the job's submitter, so a task that talks
// to the cluster (a streaming command running `smarth fs`) can do what
// its submitter can and nothing more, never with the node manager's own
// credential. A token is fetched from the namenode's WebHDFS
// (GETDELEGATIONTOKEN with doas=submitter, the node manager as renewer,
// as YARN's node manager localizes an application's tokens) when the
// job's first container here starts, and cancelled when the resource
// manager says the job is over, or when the node manager stops. Not
// renewed: it dies within the namenode's renew interval (a day) if the
// cancellation is lost.
//
// An HA group's namenodes are all listed (namenode_http: a,b,c): a call
// goes to the one that answered last, and on a standby's refusal
// (StandbyException), a refused connection or no answer in time (a hung
// host) to the next, as Hadoop's WebHDFS client fails over, so jobs run
// whichever member is active.
type jobTokens struct {
	bases   []string      // scheme://namenode_http/webhdfs/v1/, one per namenode
	cur     atomic.Int32  // the base that answered last
	cred    string        // the node manager's own credential
	renew   string        // its user: the tokens' renewer
	timeout time.Duration // per namenode asked: tokenTimeout but in tests
	client  *http.Client

	mu    sync.Mutex // held across a fetch: one token per job
	byJob map[string]string
}

// newJobTokens takes namenode_http: one address, or an HA group's
// comma-separated.
func newJobTokens(addrs string, https bool, cred string, client *http.Client) *jobTokens {
	scheme := "http"
	if https {
		scheme = "https"
	}
	j := &jobTokens{cred: cred, renew: auth.CredentialUser(cred), timeout: tokenTimeout, client: client, byJob: map[string]string{}}
	for _, a := range strings.Split(addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			j.bases = append(j.bases, scheme+"://"+a+"/webhdfs/v1/")
		}
	}
	return j
}

// errStandby marks a namenode's answer that it is not the active.
var errStandby = errors.New("StandbyException")

// tokenTimeout bounds one call to the namenode's WebHDFS.
const tokenTimeout = 15 * time.Second

// call asks the namenodes in turn, from the one that answered last,
// until one that is not a standby answers; its answer, even a refusal,
// is final. A member that did not answer in time may have served the
// call, but both calls bear a repeat: a second token for the job (the
// first, if issued, is never used and dies within a day) and a second
// cancellation of one.
func (j *jobTokens) call(ctx context.Context, method string, q url.Values, out any) error {
	first := int(j.cur.Load())
	var errs []error
	for k := range j.bases {
		i := (first + k) % len(j.bases)
		err := j.callOne(ctx, j.bases[i], method, q, out)
		if err == nil {
			j.cur.Store(int32(i))
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			return err // the caller gave up
		}
		if !errors.Is(err, errStandby) && !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return fmt.Errorf("no namenode served WebHDFS %s: %w", q.Get("op"), errors.Join(errs...))
}

func (j *jobTokens) callOne(ctx context.Context, base, method string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+j.cred)
	resp, err := j.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("namenode WebHDFS %s at %s: %s: %s", q.Get("op"), req.URL.Host, resp.Status, body)
		if resp.StatusCode == http.StatusForbidden && bytes.Contains(body, []byte(`"StandbyException"`)) {
			err = fmt.Errorf("%w: %w", errStandby, err)
		}
		return err
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// get is the job's token for user, fetched on first use.
func (j *jobTokens) get(ctx context.Context, jobID, user string) (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if t, ok := j.byJob[jobID]; ok {
		return t, nil
	}
	var resp struct {
		Token *struct {
			URLString string `json:"urlString"`
		}
	}
	err := j.call(ctx, http.MethodGet, url.Values{"op": {"GETDELEGATIONTOKEN"}, "doas": {user}, "renewer": {j.renew}}, &resp)
	if err != nil {
		return "", fmt.Errorf("delegation token for %s (job %s): %w", user, jobID, err)
	}
	if resp.Token == nil || resp.Token.URLString == "" {
		return "", fmt.Errorf("delegation token for %s (job %s): the namenode issued none (auth: simple?)", user, jobID)
	}
	j.byJob[jobID] = resp.Token.URLString
	return resp.Token.URLString, nil
}

// cancel revokes the job's token, if this node fetched one.
func (j *jobTokens) cancel(jobID string) error {
	j.mu.Lock()
	t, ok := j.byJob[jobID]
	delete(j.byJob, jobID)
	j.mu.Unlock()
	if !ok {
		return nil
	}
	return j.call(context.Background(), http.MethodPut, url.Values{"op": {"CANCELDELEGATIONTOKEN"}, "token": {t}}, nil)
}

// jobs lists the jobs holding a token.
func (j *jobTokens) jobs() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]string, 0, len(j.byJob))
	for id := range j.byJob {
		out = append(out, id)
	}
	return out
}
