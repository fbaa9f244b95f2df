package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/ideate/git-ideate/internal/apperr"
)

// ManCmd prints or installs the git-ideate(1) manual page, generated from
// the same command tree as --help. `git ideate --help` is turned by git
// into `git help ideate`, which runs `man git-ideate`: the page has to be
// where man looks. man-db searches, for each directory on PATH, its
// sibling ../share/man (and ../man), so the default --install target is
// next to the binary: `go install` puts git-ideate in $(go env
// GOPATH)/bin and the page goes to $(go env GOPATH)/share/man/man1.
type ManCmd struct {
	Install bool   `help:"Write the page to DIR/man1/git-ideate.1 instead of printing it."`
	Dir     string `placeholder:"DIR" help:"The man directory to install into (default: ../share/man beside this executable, which man finds through PATH)."`
}

// Run prints or installs the page.
func (c *ManCmd) Run(env *Env) error {
	var b bytes.Buffer
	if err := writeManPage(&b); err != nil {
		return err
	}
	if !c.Install {
		if c.Dir != "" {
			return apperr.New(apperr.Schema, "--dir needs --install")
		}
		_, err := env.Out.Write(b.Bytes())
		return err
	}
	dir := c.Dir
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return apperr.New(apperr.Internal, "cannot find this executable to install beside it (%v); pass --dir", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		dir = filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "man")
	}
	dst := filepath.Join(dir, "man1", "git-ideate.1")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "installed %s\n", dst)
	return nil
}

// writeManPage renders the whole command tree as a roff man page.
func writeManPage(w io.Writer) error {
	p, err := kong.New(&CLI{}, kongOptions()...)
	if err != nil {
		return err
	}
	app := p.Model
	fmt.Fprintf(w, ".TH GIT-IDEATE 1 \"\" \"git-ideate\" \"Git Manual\"\n")
	// NAME is one short line (whatis and apropos list it): the first
	// sentence of the help, without its period.
	name := strings.TrimSpace(app.Help)
	if i := strings.IndexAny(name, "\n"); i >= 0 {
		name = name[:i]
	}
	name, _, _ = strings.Cut(name, ". ")
	fmt.Fprintf(w, ".SH NAME\ngit-ideate \\- %s\n", roff(strings.TrimSuffix(strings.TrimSpace(name), ".")))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.B git ideate\n[\\-C \\fIDIR\\fR] \\fIcommand\\fR [\\fIflags\\fR]\n")
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff(app.Help))
	fmt.Fprintf(w, ".PP\n\\fBgit ideate help\\fR [\\fIcommand\\fR...] prints the help of a command; "+
		"\\fBgit ideate version\\fR prints the version and commit. "+
		"Flags marked (required) must be given. "+
		"A value that begins with \\- is given as \\fB\\-\\-flag=\\fR\\fIvalue\\fR.\n")
	fmt.Fprintf(w, ".SH GLOBAL OPTIONS\n")
	for _, f := range app.Flags {
		manFlag(w, f)
	}
	fmt.Fprintf(w, ".SH COMMANDS\n")
	for _, n := range app.Leaves(true) {
		fmt.Fprintf(w, ".SS \"%s\"\n", roff(strings.TrimPrefix(n.Path(), "git ideate ")))
		if n.Help != "" {
			fmt.Fprintf(w, "%s\n", roff(n.Help))
		}
		if n.Detail != "" {
			fmt.Fprintf(w, ".PP\n%s\n", roff(n.Detail))
		}
		for _, a := range n.Positional {
			fmt.Fprintf(w, ".TP\n\\fI%s\\fR\n%s\n", roff(a.Name), roff(helpValue(a)))
		}
		for _, f := range n.Flags {
			if !f.Hidden {
				manFlag(w, f)
			}
		}
	}
	fmt.Fprintf(w, ".SH SEE ALSO\n\\fBgit\\fR(1)\n")
	return nil
}

func manFlag(w io.Writer, f *kong.Flag) {
	if f.Hidden {
		return
	}
	fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", roff(f.String()), roff(helpValue(f.Value)))
}

// roff escapes text for a roff line: backslashes, a leading dot or quote,
// and hyphens (so man does not break or reformat them).
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	s = strings.ReplaceAll(s, "\n", " ")
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
