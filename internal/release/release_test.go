package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// The plugin's version, its marketplace entry's and the release's are one.
func TestVersion_EqualsThePluginManifests(t *testing.T) {
	root := repoRoot(t)
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(root, ".claude-plugin", "plugin.json"))
	if err != nil || json.Unmarshal(b, &p) != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	var m struct{ Plugins []struct{ Version string } }
	b, err = os.ReadFile(filepath.Join(root, ".claude-plugin", "marketplace.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || len(m.Plugins) != 1 {
		t.Fatalf("marketplace.json: %v", err)
	}
	if p.Version != Version || m.Plugins[0].Version != Version {
		t.Fatalf("versions differ: release %s, plugin.json %s, marketplace %s", Version, p.Version, m.Plugins[0].Version)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Fatalf("version %q is not x.y.z", Version)
	}
	wf, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), `test "${GITHUB_REF_NAME}" = "v$(go run ./internal/release/releasecmd -print-version)"`) {
		t.Error("the release workflow does not refuse a tag that differs from the source's version")
	}
}

// .goreleaser.yaml builds what Build builds: the same flags, targets and
// names (read line by line: the file is kept in this plain shape).
func TestGoreleaserConfig_MatchesTheLocalBuild(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	tmpl := strings.NewReplacer("V", "{{ .Version }}", "C", "{{ .FullCommit }}")
	want := []string{
		"project_name: " + Project,
		"main: ./cmd/git-ideate\n    binary: git-ideate\n",
		"main: ./cmd/git-ideate-symbols\n    binary: git-ideate-symbols\n",
		`name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`,
		`name_template: "{{ .ProjectName }}_{{ .Version }}_checksums.txt"`,
		"algorithm: sha256",
		"- src: LICENSE\n", "- src: " + NoticesFile + "\n", "- src: README.md\n", "- src: " + ManPage + "\n        strip_parent: true\n",
	}
	for _, f := range BuildFlags {
		want = append(want, "- "+f)
	}
	for _, tag := range strings.Split(CGOTags, ",") {
		want = append(want, "- "+tag)
	}
	for _, w := range want {
		if !strings.Contains(cfg, w) {
			t.Errorf(".goreleaser.yaml lacks %q", w)
		}
	}
	// One build block per group of targets: its env, ldflags and targets.
	blocks := strings.Split(cfg[strings.Index(cfg, "builds:"):strings.Index(cfg, "archives:")], "  - id: ")[1:]
	seen := map[string]bool{}
	for _, b := range blocks {
		var goos, goarch []string
		for _, key := range []string{"goos", "goarch"} {
			_, rest, ok := strings.Cut(b, "    "+key+":\n")
			if !ok {
				t.Fatalf("build %q has no %s", strings.SplitN(b, "\n", 2)[0], key)
			}
			for _, line := range strings.Split(rest, "\n") {
				v, ok := strings.CutPrefix(line, "      - ")
				if !ok {
					break
				}
				if key == "goos" {
					goos = append(goos, v)
				} else {
					goarch = append(goarch, v)
				}
			}
		}
		helper := strings.Contains(b, "main: ./cmd/git-ideate-symbols\n")
		for _, os := range goos {
			for _, arch := range goarch {
				tg := os + "/" + arch
				seen[fmt.Sprint(helper, tg)] = true
				cc, cgo := CGOTargets[tg]
				if helper && !cgo {
					t.Errorf("%s: the helper is built for a target without cgo", tg)
				}
				cgo = helper // git-ideate is pure Go everywhere
				if !strings.Contains(b, "- "+tmpl.Replace(LDFlags("V", "C", cgo))+"\n") {
					t.Errorf("%s: ldflags are not %q", tg, LDFlags("V", "C", cgo))
				}
				if cgo != strings.Contains(b, "- CGO_ENABLED=1") || !cgo && !strings.Contains(b, "- CGO_ENABLED=0") {
					t.Errorf("%s: cgo should be %v", tg, cgo)
				}
				if cgo && cc != "" && !strings.Contains(b, "- CC="+cc) {
					t.Errorf("%s: no CC=%s", tg, cc)
				}
			}
		}
	}
	for _, tg := range Targets {
		if !seen[fmt.Sprint(false, tg.String())] {
			t.Errorf("no build of git-ideate for %s", tg)
		}
	}
	for tg := range CGOTargets {
		if !seen[fmt.Sprint(true, tg)] {
			t.Errorf("no build of the helper for %s", tg)
		}
	}
	if len(seen) != len(Targets)+len(CGOTargets) {
		t.Errorf("builds for %v, Targets %v", seen, Targets)
	}
	if got := ArchiveName("1.2.3", Target{"linux", "arm64"}); got != "git-ideate_1.2.3_linux_arm64.tar.gz" {
		t.Errorf("archive name %s", got)
	}
}

// Two builds of one commit are the same bytes, the archive holds
// git-ideate, the tree-sitter helper where the host is a cgo target, the
// licence and the README, and the binaries print their version.
func TestBuild_Reproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	root := repoRoot(t)
	here := Target{runtime.GOOS, runtime.GOARCH}
	o := Options{Root: root, Version: "9.8.7", Commit: "0123456789abcdef0123456789abcdef01234567", Date: 1700000000, Targets: []Target{here}}
	cc, cgo := CGOTargets[here.String()]
	cgo = cgo && cc == "" && hasCC()
	if cgo {
		o.CGO = map[string]bool{here.String(): true}
	}
	o.Out = t.TempDir()
	a1, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Out = t.TempDir()
	a2, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(a1) != 2 || a1[0].SHA256 != a2[0].SHA256 || a1[1].SHA256 != a2[1].SHA256 {
		t.Fatalf("two builds differ:\n%+v\n%+v", a1, a2)
	}
	sums, _ := os.ReadFile(a1[1].Path)
	if want := a1[0].SHA256 + "  " + ArchiveName("9.8.7", here) + "\n"; string(sums) != want || a1[1].Name != ChecksumsName("9.8.7") {
		t.Fatalf("checksums %q, want %q", sums, want)
	}
	f, _ := os.Open(a1[0].Path)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	dir := t.TempDir()
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.ModTime.Unix() != 1700000000 || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v uid %d uname %q", h.Name, h.ModTime, h.Uid, h.Uname)
		}
		out, _ := os.OpenFile(filepath.Join(dir, h.Name), os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
		io.Copy(out, tr)
		out.Close()
	}
	want := "git-ideate LICENSE THIRD_PARTY_NOTICES README.md git-ideate.1"
	if cgo {
		want = "git-ideate git-ideate-symbols LICENSE THIRD_PARTY_NOTICES README.md git-ideate.1"
		if v, err := exec.Command(filepath.Join(dir, "git-ideate-symbols"), "--version").Output(); err != nil || !strings.HasPrefix(string(v), "git-ideate-symbols ") {
			t.Fatalf("the helper's --version: %q %v", v, err)
		}
	}
	if strings.Join(names, " ") != want {
		t.Fatalf("archive holds %v, want %s", names, want)
	}
	// The binary carries the stamp, also where kong answers (`help`).
	for _, args := range [][]string{{"git-ideate", "--version"}, {"git-ideate", "help", "--version"}} {
		v, err := exec.Command(filepath.Join(dir, args[0]), args[1:]...).Output()
		if err != nil || !strings.HasPrefix(string(v), "git-ideate 9.8.7 (commit 0123456789abcdef0123456789abcdef01234567;") {
			t.Fatalf("%q: %q %v", args, v, err)
		}
	}
}

func TestBuild_BadVersionChangesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	if _, err := Build(context.Background(), Options{Root: repoRoot(t), Out: out, Version: "1 2", Commit: "c", Date: 1}); err == nil {
		t.Fatal("a version with a blank was accepted")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the output directory was created: %v", err)
	}
}

// The Windows artifact: a zip holding git-ideate.exe (a PE image), the
// licence and the README, named as the launcher asks for it. It is built
// here, never run (no test runs on Windows).
func TestBuild_Windows(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds the binary")
	}
	win := Target{"windows", "amd64"}
	a, err := Build(context.Background(), Options{Root: repoRoot(t), Out: t.TempDir(), Version: "9.8.7",
		Commit: "0123456789abcdef0123456789abcdef01234567", Date: 1700000000, Targets: []Target{win}})
	if err != nil {
		t.Fatal(err)
	}
	if a[0].Name != "git-ideate_9.8.7_windows_amd64.zip" || a[0].Name != ArchiveName("9.8.7", win) {
		t.Fatalf("artifact %s", a[0].Name)
	}
	zr, err := zip.OpenReader(a[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !strings.HasSuffix(f.Name, ".exe") {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 2)
		io.ReadFull(r, head)
		r.Close()
		if string(head) != "MZ" {
			t.Fatalf("%s starts with %q, not a PE image", f.Name, head)
		}
	}
	if strings.Join(names, " ") != "git-ideate.exe LICENSE THIRD_PARTY_NOTICES README.md git-ideate.1" {
		t.Fatalf("zip holds %v", names)
	}
}

// THIRD_PARTY_NOTICES is what Notices makes of the modules as they are:
// adding, dropping or upgrading a linked module without regenerating it
// fails here. It names Go and every linked module, each with its licence.
func TestNotices_TheCommittedFileIsCurrent(t *testing.T) {
	root := repoRoot(t)
	got, err := Notices(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(root, NoticesFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Fatalf("%s is stale: run `go run ./internal/release/releasecmd -notices > %s`", NoticesFile, NoticesFile)
	}
	for _, want := range []string{"Go (runtime and standard library) — LICENSE", "github.com/alecthomas/kong ", "github.com/pjbgf/sha1cd ",
		"github.com/tree-sitter/go-tree-sitter ", "Apache License", "Permission is hereby granted"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the notices lack %q", want)
		}
	}
	if strings.Contains(string(got), "go-cmp") || strings.Contains(string(got), "mcp-go") {
		t.Error("the notices name a module only the tests use")
	}
}

// hasCC reports whether the host has the C compiler cgo would use.
func hasCC() bool {
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		return false
	}
	_, err = exec.LookPath(strings.Fields(string(cc) + " gcc")[0])
	return err == nil
}
