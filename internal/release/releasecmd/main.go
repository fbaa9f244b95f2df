// Command releasecmd builds git ideate's release artifacts locally, the
// same names and contents the release workflow publishes (see package
// release):
//
//	go run ./internal/release/releasecmd -out dist [-targets linux/amd64,darwin/arm64] [-version 0.1.0]
//	go run ./internal/release/releasecmd -notices > THIRD_PARTY_NOTICES
//
// It prints one line per artifact: its sha256 and path; with -notices, the
// third-party notices the archives carry, as the modules are now.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/ideate/git-ideate/internal/release"
)

func main() {
	out := flag.String("out", "dist", "directory the artifacts are written to")
	version := flag.String("version", release.Version, "version stamped into the binaries")
	targets := flag.String("targets", "", "comma-separated os/arch list (default: every release target)")
	cgo := flag.String("cgo", "", "comma-separated os/arch list built with CGO_ENABLED=1")
	printVersion := flag.Bool("print-version", false, "print this source tree's version and exit")
	notices := flag.Bool("notices", false, "print "+release.NoticesFile+" as the modules are now and exit")
	flag.Parse()
	if *printVersion {
		fmt.Println(release.Version)
		return
	}
	if *notices {
		b, err := release.Notices(context.Background(), ".")
		if err != nil {
			fail(err)
		}
		os.Stdout.Write(b)
		return
	}
	o := release.Options{Root: ".", Out: *out, Version: *version, CGO: map[string]bool{}}
	for _, t := range split(*targets) {
		os, arch, ok := strings.Cut(t, "/")
		if !ok {
			fail(fmt.Errorf("target %q is not os/arch", t))
		}
		o.Targets = append(o.Targets, release.Target{OS: os, Arch: arch})
	}
	for _, t := range split(*cgo) {
		o.CGO[t] = true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	arts, err := release.Build(ctx, o)
	if err != nil {
		fail(err)
	}
	for _, a := range arts {
		fmt.Printf("%s  %s\n", a.SHA256, a.Path)
	}
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "releasecmd:", err)
	os.Exit(1)
}
