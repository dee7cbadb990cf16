package namenode

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"smarth/internal/auth"
	"smarth/internal/namenode/console"
	"smarth/internal/webui"
)

// httpHandler serves the namenode's HTTP port: the web console (package
// console), /metrics, WebHDFS and, when enabled, pprof.
func (nn *NameNode) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(nn.metrics.reg, promhttp.HandlerOpts{}))
	console.Register(mux, console.Config{ResourceManagerWeb: nn.cfg.ResourceManagerWeb,
		Secure: nn.ident.mode == auth.Secure, Clock: nn.clock}, consoleView{nn})
	nn.webhdfsRoutes(mux)
	if nn.cfg.Pprof {
		webui.HandlePprof(mux)
	}
	return mux
}

// health: the edit log can be written (a namenode that cannot journal
// refuses every change). Safe mode is healthy: it is a state, not a fault.
func (nn *NameNode) health() error {
	if err := nn.journal.Err(); err != nil {
		return errors.New("edit log failed: " + err.Error())
	}
	return nil
}
