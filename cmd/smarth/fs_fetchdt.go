package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/auth"
	"smarth/internal/cluster"
	"smarth/internal/pki"
)

// `smarth fs fetchdt`, HDFS's `hdfs fetchdt`: fetches a delegation token
// over WebHDFS with the caller's own credential and writes it to a Hadoop
// token storage file, which Hadoop's clients read from
// HADOOP_TOKEN_FILE_LOCATION (docs/security.md, "Hadoop's clients on the
// secure cluster"); prints, renews or cancels the tokens of such a file.

func fsFetchdtCmd(f *fsFlags) *cobra.Command {
	var webservice, renewer string
	var cancel, renew, print bool
	c := &cobra.Command{
		Use:   "fetchdt [--webservice URL] [--renewer NAME] [--cancel | --renew | --print] TOKEN_FILE",
		Short: "Fetch a delegation token into a Hadoop token file, or print, renew or cancel its tokens (hdfs fetchdt)",
		Long: `Fetch a delegation token from the namenode into TOKEN_FILE (Hadoop's token
storage format, 0600), as "hdfs fetchdt" does; Hadoop's clients use it with
HADOOP_TOKEN_FILE_LOCATION=TOKEN_FILE, and so does smarth with
SMARTH_TOKEN_FILE=TOKEN_FILE. The token proves your user for a day,
renewable up to a week; whoever can read the file is you until then.

The namenode's web address is --webservice, else the local cluster's when
the namenode is the local cluster's. --renew and --cancel call the address
each token names (its service), or --webservice.`,
		Example: `  smarth fs fetchdt /tmp/alice.dt
  HADOOP_TOKEN_FILE_LOCATION=/tmp/alice.dt hadoop fs -ls webhdfs://127.0.0.1:9870/
  smarth fs fetchdt --print /tmp/alice.dt
  smarth fs fetchdt --cancel /tmp/alice.dt`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, b := range []bool{cancel, renew, print} {
				if b {
					n++
				}
			}
			if n > 1 {
				return usageErr("ERROR: Only specify cancel, renew or print.")
			}
			file, out := args[0], cmd.OutOrStdout()
			if print {
				return printTokens(out, file)
			}
			nn := f.namenode
			if nn == "" {
				nn = cluster.DefaultNameNode()
			}
			w, err := newTokenWeb(nn, webservice)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if renew || cancel {
				return w.renewOrCancel(ctx, out, file, cancel)
			}
			if w.base == "" {
				return usageErr("fetchdt: --webservice: the namenode's web address is needed (it is known only for the local cluster)")
			}
			return w.fetch(ctx, out, file, renewer, webservice != "")
		},
	}
	c.Flags().StringVar(&webservice, "webservice", "", "URL (http://HOST:PORT) of the namenode's web server to contact")
	c.Flags().StringVar(&renewer, "renewer", "", "name of the delegation token renewer (default: you)")
	c.Flags().BoolVar(&cancel, "cancel", false, "cancel the delegation tokens in TOKEN_FILE")
	c.Flags().BoolVar(&renew, "renew", false, "renew the delegation tokens in TOKEN_FILE (you must be their renewer)")
	c.Flags().BoolVar(&print, "print", false, "print the delegation tokens in TOKEN_FILE")
	return c
}

// printTokens is `hdfs fetchdt --print`: "Token (IDENTIFIER) for SERVICE".
func printTokens(w io.Writer, file string) error {
	toks, err := auth.ReadTokenStorageFile(file)
	if err != nil {
		return err
	}
	for _, st := range toks {
		id, err := auth.ParseDelegationIdentifier(st.Token.Identifier)
		if err != nil {
			return fmt.Errorf("%s: token %q: %v", file, st.Alias, err)
		}
		fmt.Fprintf(w, "Token (%s) for %s\n", id.Stable(), st.Token.Service)
	}
	return nil
}

// tokenWeb calls the namenode's WebHDFS token operations with the
// caller's credential.
type tokenWeb struct {
	base   string // scheme://host:port of --webservice or the local cluster's namenode, "" if unknown
	scheme string
	cred   string
	hc     *http.Client
}

func newTokenWeb(nn, webservice string) (*tokenWeb, error) {
	sec, err := cluster.ClientSecurity(nn)
	if err != nil {
		return nil, err
	}
	cred, err := auth.LoadCredential(sec.TokenFile)
	if err != nil {
		return nil, err
	}
	w := &tokenWeb{scheme: pki.Scheme(sec.TLS), cred: cred,
		hc: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: sec.TLS}}}
	switch {
	case webservice != "":
		w.base = webservice
	default:
		if st, err := cluster.LoadState(cluster.Home()); err == nil && st.NameNode == nn && st.NameNodeHTTP != "" {
			w.base = st.NameNodeHTTP
		}
	}
	if w.base != "" && !strings.Contains(w.base, "://") {
		w.base = w.scheme + "://" + w.base
	}
	w.base = strings.TrimSuffix(w.base, "/")
	return w, nil
}

// call runs one WebHDFS operation at base and decodes its JSON answer
// into v (nil: none); a RemoteException becomes its error.
func (w *tokenWeb) call(ctx context.Context, base, method string, q url.Values, v any) error {
	u := base + "/webhdfs/v1/?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	if w.cred != "" {
		req.Header.Set("Authorization", "Bearer "+w.cred)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var re struct {
			RemoteException struct{ Exception, Message string }
		}
		if json.Unmarshal(body, &re) == nil && re.RemoteException.Exception != "" {
			return fmt.Errorf("%s: %s", re.RemoteException.Exception, re.RemoteException.Message)
		}
		return fmt.Errorf("%s %s: %s", q.Get("op"), base, resp.Status)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(body, v)
}

// fetch gets a token and writes it, its service the web address as
// Hadoop's WebHdfsFileSystem names it (IP:port), so Hadoop picks it for
// webhdfs://HOST:PORT.
func (w *tokenWeb) fetch(ctx context.Context, out io.Writer, file, renewer string, via bool) error {
	if w.cred == "" {
		return fmt.Errorf("fetchdt: no credential to ask the namenode with (run `smarth login`, or set SMARTH_TOKEN_FILE)")
	}
	if auth.IsToken(w.cred) {
		return fmt.Errorf("fetchdt: Delegation Token can be issued only with your own credential, not with a token (your token file holds a delegation token)")
	}
	q := url.Values{"op": {"GETDELEGATIONTOKEN"}}
	if renewer != "" {
		q.Set("renewer", renewer)
	}
	var resp struct {
		Token *struct{ URLString string }
	}
	if err := w.call(ctx, w.base, http.MethodGet, q, &resp); err != nil {
		return fmt.Errorf("fetchdt: %w", err)
	}
	if resp.Token == nil {
		return fmt.Errorf("fetchdt: the namenode at %s issues no delegation tokens (it runs auth: simple, where none is needed)", w.base)
	}
	tok, err := auth.DecodeHadoopToken(resp.Token.URLString)
	if err != nil {
		return fmt.Errorf("fetchdt: the namenode's answer: %w", err)
	}
	u, err := url.Parse(w.base)
	if err != nil {
		return err
	}
	tok.Service = tokenService(u.Host)
	if err := auth.WriteTokenStorageFile(file, []auth.StoredToken{{Alias: tok.Service, Token: tok}}); err != nil {
		return err
	}
	if via {
		fmt.Fprintf(out, "Fetched token via %s for %s into %s\n", w.base, tok.Service, file)
	} else {
		fmt.Fprintf(out, "Fetched token for %s into %s\n", tok.Service, file)
	}
	return nil
}

// tokenService is SecurityUtil.buildTokenService: the host's IP and the
// port (hadoop.security.token.service.use_ip, true by default).
func tokenService(hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if ips, err := net.LookupHost(host); err == nil && len(ips) > 0 {
		host = ips[0]
	}
	return net.JoinHostPort(host, port)
}

// renewOrCancel renews or cancels every token in file at its service
// (or --webservice), printing what hdfs fetchdt prints.
func (w *tokenWeb) renewOrCancel(ctx context.Context, out io.Writer, file string, cancel bool) error {
	toks, err := auth.ReadTokenStorageFile(file)
	if err != nil {
		return err
	}
	for _, st := range toks {
		base := w.base
		if base == "" {
			base = w.scheme + "://" + st.Token.Service
		}
		tok := st.Token.URLString()
		if cancel {
			if err := w.call(ctx, base, http.MethodPut, url.Values{"op": {"CANCELDELEGATIONTOKEN"}, "token": {tok}}, nil); err != nil {
				return fmt.Errorf("fetchdt: %w", err)
			}
			fmt.Fprintf(out, "Cancelled token for %s\n", st.Token.Service)
			continue
		}
		var resp struct{ Long int64 }
		if err := w.call(ctx, base, http.MethodPut, url.Values{"op": {"RENEWDELEGATIONTOKEN"}, "token": {tok}}, &resp); err != nil {
			return fmt.Errorf("fetchdt: %w", err)
		}
		// Java's Date.toString.
		fmt.Fprintf(out, "Renewed token for %s until: %s\n", st.Token.Service, time.UnixMilli(resp.Long).Format("Mon Jan 02 15:04:05 MST 2006"))
	}
	return nil
}
