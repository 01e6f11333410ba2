package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveStatus serves GET /status (JSON StatusReport) on a unix socket until
// ctx ends. A stale socket file from a crashed agent is replaced (the
// single-instance lock is already held when this runs).
func (a *Agent) serveStatus(ctx context.Context, path string) (stop func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("status socket directory: %w", err)
	}
	// A live socket belongs to another agent (e.g. one in another network
	// namespace given the same path): refuse rather than steal it. A dead
	// one is left over from a crash and is replaced.
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("status socket %s is in use by another agent: give each agent its own --status-socket", path)
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on status socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("status socket permissions: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a.Status())
	})
	return serve(ctx, ln, mux, a.log, func() { _ = os.Remove(path) }), nil
}

// serveMetrics serves the Prometheus registry on addr (/metrics).
func (a *Agent) serveMetrics(ctx context.Context, addr string) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.Registry(), promhttp.HandlerOpts{ErrorLog: slogAdapter{a.log}}))
	return serve(ctx, ln, mux, a.log, nil), ln.Addr().String(), nil
}

func serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, after func()) func() {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		if after != nil {
			after()
		}
	}
}

type slogAdapter struct{ l *slog.Logger }

func (s slogAdapter) Println(v ...any) { s.l.Error("metrics", "err", fmt.Sprint(v...)) }

// QueryStatus asks the agent listening on the unix socket path for its status.
func QueryStatus(ctx context.Context, path string) (StatusReport, error) {
	var r StatusReport
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}, Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://agent/status", nil)
	if err != nil {
		return r, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return r, fmt.Errorf("no agent answers on %s (is `coopcc agent` running in this network namespace? pass --status-socket): %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("agent status: HTTP %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return r, fmt.Errorf("decode agent status: %w", err)
	}
	return r, nil
}
