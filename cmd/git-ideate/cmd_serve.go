package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/sprintview"
)

// ServeCmd is `git ideate serve`: the sprint view on a loopback port.
type ServeCmd struct {
	Addr   string `help:"Where to listen: a loopback address and port (127.0.0.1:0 picks a free port)." default:"127.0.0.1:0" placeholder:"HOST:PORT"`
	Sprint int    `help:"Sprint number (default: the highest-numbered sprint<N> directory)." placeholder:"N"`
	Dir    string `help:"Planning root holding sprint<N>/; default docs/agents at the top of the working tree." placeholder:"DIR"`
}

// Run listens, prints the page's URL and serves until interrupted. The
// plan is read again for every page, so edits and new sprints show.
func (c *ServeCmd) Run(ctx context.Context, env *Env) error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return apperr.New(apperr.Schema, "--addr %q is not HOST:PORT", c.Addr)
	}
	if !sprintview.Loopback(c.Addr) {
		return apperr.New(apperr.Schema, "--addr %q is not a loopback address; the sprint view is for this machine only", c.Addr)
	}
	pf := planFlags{Sprint: c.Sprint, Dir: c.Dir}
	rev, err := revisionFor(env, pf)
	if err != nil {
		return err
	}
	g, err := env.Git()
	if err != nil {
		return err
	}
	rec, err := env.Record()
	if err != nil {
		return err
	}
	_, load, err := taskPlan(env, g, pf)
	if err != nil {
		return err
	}
	rev.Plan = load
	s, err := sprintview.New(sprintview.Deps{Plan: rev.Plan, Exec: rev.Exec, Revision: rev, Board: rev.Board, Record: rec, Refs: sprintview.RefsOf(g)})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return apperr.Wrap(apperr.Internal, err, "cannot listen on %s: %v", c.Addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(env.Out, "git ideate serve: http://%s/ (read-only; Ctrl-C stops it)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return apperr.Wrap(apperr.Internal, err, "the sprint view stopped: %v", err)
		}
		return nil
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	}
}
