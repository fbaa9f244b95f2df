package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/version"
)

// Version is this source tree's version (package version).
const Version = version.Version

// Project is the archives' name and the binary's.
const Project = "git-ideate"

// Main is one binary of a release archive.
type Main struct {
	Binary  string // its file name, without .exe
	Package string // what go build compiles
	// CGO marks the binary that needs cgo: it is built on the targets
	// Options.CGO names, with cgo, and left out of the other archives.
	CGO bool
}

// Mains are the binaries of an archive: git-ideate, pure Go on every
// target, and beside it where cgo builds, the optional tree-sitter helper
// (internal/symbols finds it there; without it the symbol reader is the
// weaker fallback).
var Mains = []Main{
	{Binary: Project, Package: "./cmd/git-ideate"},
	{Binary: Project + "-symbols", Package: "./cmd/git-ideate-symbols", CGO: true},
}

// BuildFlags are the go build flags of a release binary (.goreleaser.yaml
// builds[].flags).
var BuildFlags = []string{"-trimpath", "-buildvcs=false"}

// LDFlags are the linker flags of a release binary (.goreleaser.yaml
// builds[].ldflags, with its templates filled in); static adds the
// external static link a cgo build needs to run on any Linux.
func LDFlags(version, commit string, static bool) string {
	f := fmt.Sprintf("-s -w -buildid= -X github.com/ideate/git-ideate/internal/corecmd.version=%s -X github.com/ideate/git-ideate/internal/corecmd.commit=%s", version, commit)
	if static {
		f += ` -linkmode external -extldflags "-static"`
	}
	return f
}

// CGOTargets are the targets whose archive carries the tree-sitter
// helper, built with cgo and statically linked (with the netgo and
// osusergo tags) so it runs on any Linux; each with the C compiler that
// builds for it ("" is the host's). The other archives hold git-ideate
// alone, whose verdicts say where the symbol check was the weaker one.
var CGOTargets = map[string]string{"linux/amd64": "", "linux/arm64": "aarch64-linux-gnu-gcc"}

// CGOTags are the build tags of a cgo release binary.
var CGOTags = "netgo,osusergo"

// Target is one OS and architecture.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Targets are the platforms every release carries. What differs by OS
// (process groups, file locks, file identity) is in internal/osproc; the
// Windows half builds and is vetted here, but no test runs on Windows.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ArchiveName is the archive a release holds for t.
func ArchiveName(version string, t Target) string {
	ext := ".tar.gz"
	if t.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", Project, version, t.OS, t.Arch, ext)
}

// ChecksumsName is the checksums file of a release.
func ChecksumsName(version string) string {
	return fmt.Sprintf("%s_%s_checksums.txt", Project, version)
}

// Options says what Build builds.
type Options struct {
	Root    string   // the module's root (holds go.mod)
	Out     string   // the directory the artifacts are written to
	Version string   // stamped into the binary; "" is Version
	Commit  string   // stamped into the binary; "" asks git for HEAD
	Date    int64    // the archives' entry time (Unix); 0 is the commit's time
	Targets []Target // nil is Targets
	// CGO names the targets ("linux/amd64") whose archive gets the
	// tree-sitter helper, built with cgo, statically, with the C compiler
	// CGOTargets gives. The release workflow builds CGOTargets this way.
	CGO map[string]bool
}

// Artifact is one file Build wrote.
type Artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Target string `json:"target,omitempty"`
}

// Build compiles Mains for each target, archives them with the
// licence, the third-party notices, the README and the manual page, and
// writes the checksums file last. It returns the archives and the
// checksums file, in that order.
func Build(ctx context.Context, o Options) ([]Artifact, error) {
	if o.Version == "" {
		o.Version = Version
	}
	if o.Targets == nil {
		o.Targets = Targets
	}
	if strings.ContainsAny(o.Version, "/\\ \t\n") {
		return nil, apperr.New(apperr.Schema, "version %q is not a version", o.Version)
	}
	if o.Commit == "" || o.Date == 0 {
		c, d, err := headCommit(ctx, o.Root)
		if err != nil {
			return nil, err
		}
		if o.Commit == "" {
			o.Commit = c
		}
		if o.Date == 0 {
			o.Date = d
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create %s", o.Out)
	}
	extra := map[string][]byte{}
	for _, f := range []string{"LICENSE", NoticesFile, "README.md", ManPage} {
		b, err := os.ReadFile(filepath.Join(o.Root, f))
		if err != nil {
			return nil, apperr.Wrap(apperr.NotFound, err, "cannot read %s", f)
		}
		extra[f] = b
	}
	var arts []Artifact
	for _, t := range o.Targets {
		a, err := buildOne(ctx, o, t, extra)
		if err != nil {
			return nil, err
		}
		arts = append(arts, a)
	}
	var sums bytes.Buffer
	sorted := append([]Artifact(nil), arts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, a := range sorted {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name)
	}
	name := ChecksumsName(o.Version)
	p := filepath.Join(o.Out, name)
	if err := os.WriteFile(p, sums.Bytes(), 0o644); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot write %s", p)
	}
	h := sha256.Sum256(sums.Bytes())
	return append(arts, Artifact{Name: name, Path: p, SHA256: hex.EncodeToString(h[:])}), nil
}

// ManPage is the manual page each archive holds beside the binary (as
// git-ideate.1), generated by git ideate man and kept current by a test.
const ManPage = "docs/man/git-ideate.1"

func buildOne(ctx context.Context, o Options, t Target, extra map[string][]byte) (Artifact, error) {
	tmp, err := os.MkdirTemp("", "ideate-release-")
	if err != nil {
		return Artifact{}, apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
	}
	defer os.RemoveAll(tmp)
	var files []archFile
	for _, m := range Mains {
		if m.CGO && !o.CGO[t.String()] {
			continue
		}
		exe := m.Binary
		if t.OS == "windows" {
			exe += ".exe"
		}
		b, err := goBuild(ctx, o, t, m, filepath.Join(tmp, exe))
		if err != nil {
			return Artifact{}, err
		}
		files = append(files, archFile{exe, b, 0o755})
	}
	files = append(files, archFile{"LICENSE", extra["LICENSE"], 0o644}, archFile{NoticesFile, extra[NoticesFile], 0o644},
		archFile{"README.md", extra["README.md"], 0o644}, archFile{path.Base(ManPage), extra[ManPage], 0o644})
	mtime := time.Unix(o.Date, 0).UTC()
	var arc []byte
	if t.OS == "windows" {
		arc, err = zipOf(files, mtime)
	} else {
		arc, err = tarGzOf(files, mtime)
	}
	if err != nil {
		return Artifact{}, apperr.Wrap(apperr.Internal, err, "cannot archive the %s binary", t)
	}
	name := ArchiveName(o.Version, t)
	p := filepath.Join(o.Out, name)
	if err := os.WriteFile(p, arc, 0o644); err != nil {
		return Artifact{}, apperr.Wrap(apperr.Write, err, "cannot write %s", p)
	}
	h := sha256.Sum256(arc)
	return Artifact{Name: name, Path: p, SHA256: hex.EncodeToString(h[:]), Target: t.String()}, nil
}

// goBuild compiles one of Mains for t into bin and returns its bytes:
// the helper with cgo, git-ideate without.
func goBuild(ctx context.Context, o Options, t Target, m Main, bin string) ([]byte, error) {
	cgo := m.CGO
	args := append([]string{"build"}, BuildFlags...)
	if cgo {
		args = append(args, "-tags", CGOTags)
	}
	args = append(args, "-ldflags", LDFlags(o.Version, o.Commit, cgo), "-o", bin, m.Package)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0", "GOFLAGS=")
	if cgo {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1")
		if cc := CGOTargets[t.String()]; cc != "" {
			cmd.Env = append(cmd.Env, "CC="+cc)
		}
	}
	osproc.Group(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "go build of %s for %s failed: %s", m.Package, t, strings.TrimSpace(string(out)))
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read the %s binary for %s", m.Binary, t)
	}
	return b, nil
}

type archFile struct {
	name string
	data []byte
	mode int64
}

func tarGzOf(files []archFile, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipOf(files []archFile, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(w, bytes.NewReader(f.data)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// headCommit is HEAD's name and committer time in root.
func headCommit(ctx context.Context, root string) (string, int64, error) {
	cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%H %ct", "HEAD")
	cmd.Dir = root
	osproc.Group(cmd)
	out, err := cmd.Output()
	if err != nil {
		return "", 0, apperr.Wrap(apperr.NotARepo, err, "cannot read HEAD in %s; pass a commit and a date", root)
	}
	var h string
	var t int64
	if _, err := fmt.Sscanf(string(out), "%s %d", &h, &t); err != nil {
		return "", 0, apperr.Wrap(apperr.Internal, err, "cannot read git log's answer %q", out)
	}
	return h, t, nil
}
