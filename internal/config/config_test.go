package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func writeFile(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, config.FileName)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func defaultsFrom(path string) map[string]string {
	m := map[string]string{}
	for _, k := range []string{config.KeySchemaVersion, config.KeyRecordPath, config.KeyBackend, config.KeyWorkStatePath,
		config.KeyClaimPriming, config.KeySteeringEnabled, config.KeyRemote} {
		m[k] = path
	}
	// The store's settings exist only in git config.
	for _, k := range []string{config.KeyFsync, config.KeyLockTimeout, config.KeyStaleLock, config.KeyMaintenance} {
		m[k] = config.SourceDefault
	}
	// No file of these tests sets the attempt bound.
	m[config.KeyMaxAttempts] = config.SourceDefault
	return m
}

// storeDefaults sets the store's default settings on c.
func storeDefaults(c *config.Config) *config.Config {
	c.LockTimeout, c.StaleLockAfter, c.Maintenance = 10*time.Second, time.Second, true
	return c
}

func TestDefault(t *testing.T) {
	c := config.Default()
	want := storeDefaults(&config.Config{SchemaVersion: 10, RecordPath: ".ideate/record/", Backend: "local",
		WorkStatePath: ".ideate-work/", Source: defaultsFrom("default"), Unknown: map[string]json.RawMessage{}})
	if d := cmp.Diff(want, c); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// No file, no git config: the defaults; nothing is created.
func TestLoad_MissingFileIsDefaults(t *testing.T) {
	for _, wt := range []string{t.TempDir(), ""} {
		c, err := config.Load(wt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(config.Default(), c); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
		if wt != "" {
			if _, err := os.Stat(filepath.Join(wt, config.FileName)); !os.IsNotExist(err) {
				t.Fatalf("Load created the file: %v", err)
			}
		}
	}
}

func TestLoad_FullFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, `{
  "schema_version": 10,
  "record": {"path": "notes/record/", "color": "blue"},
  "backend": "local",
  "work_state": {"path": "work/", "claim_priming": true, "extra": [1]},
  "steering": {"enabled": true},
  "future_key": {"a": 1}
}`)
	c, err := config.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := defaultsFrom(path)
	src[config.KeyRemote] = config.SourceDefault
	want := storeDefaults(&config.Config{SchemaVersion: 10, RecordPath: "notes/record/", Backend: "local", WorkStatePath: "work/",
		ClaimPriming: true, SteeringEnabled: true, Source: src, File: path,
		Unknown: map[string]json.RawMessage{
			"record.color":     json.RawMessage(`"blue"`),
			"work_state.extra": json.RawMessage(`[1]`),
			"future_key":       json.RawMessage(`{"a": 1}`),
		}})
	if d := cmp.Diff(want, c); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// A v9 file (neither record nor backend) is read as is, keys beside it
// kept, and never rewritten.
func TestLoad_LegacyV9(t *testing.T) {
	dir := t.TempDir()
	const legacy = "{\"schema_version\": 9, \"project\": \"x\", \"steering\": {\"enabled\": false}}\n"
	path := writeFile(t, dir, legacy)
	c, err := config.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Legacy || c.SchemaVersion != 9 || c.RecordPath != config.DefaultRecordPath || c.Backend != "local" ||
		c.Source[config.KeyRecordPath] != config.SourceDefault || c.Source[config.KeySchemaVersion] != path ||
		string(c.Unknown["project"]) != `"x"` {
		t.Fatalf("%+v", c)
	}
	if b, _ := os.ReadFile(path); string(b) != legacy {
		t.Fatalf("the legacy file was rewritten: %q", b)
	}
	// Without schema_version at all.
	writeFile(t, dir, `{}`)
	if c, err := config.Load(dir, nil); err != nil || !c.Legacy || c.SchemaVersion != 10 {
		t.Fatalf("{}: %+v %v", c, err)
	}
	// A current file is not legacy.
	writeFile(t, dir, `{"backend":"local"}`)
	if c, err := config.Load(dir, nil); err != nil || c.Legacy {
		t.Fatalf("backend only: %+v %v", c, err)
	}
}

// Every failure has its code, names the file and the field (or position),
// and leaves the file's bytes alone.
func TestLoad_Errors(t *testing.T) {
	cases := []struct {
		name, content string
		code          apperr.Code
		mention       []string
	}{
		{"newer schema", `{"schema_version": 11, "record": 5}`, config.CodeVersion, []string{"newer git ideate", "11"}},
		{"much newer schema", `{"schema_version": 1e999}`, config.CodeVersion, []string{"newer git ideate"}},
		{"newer fractional", `{"schema_version": 10.5}`, config.CodeVersion, nil},
		{"empty", ``, config.CodeParse, []string{"empty"}},
		{"blank", "  \n\t", config.CodeParse, []string{"empty"}},
		{"truncated", "{\n  \"schema_version\": 10,\n  \"record\": {", config.CodeParse, []string{"line 3", "column 14"}},
		{"trailing comma", "{\n  \"backend\": \"local\",\n}", config.CodeParse, []string{"line 3, column 1", "offset 24"}},
		{"trailing garbage", `{} x`, config.CodeParse, []string{"line 1, column 4"}},
		{"two values", `{}{}`, config.CodeParse, []string{"line 1"}},
		{"comment", "// team config\n{}", config.CodeParse, []string{"line 1, column 1"}},
		{"array", `[1, 2]`, config.CodeInvalid, []string{"must hold a JSON object, not an array"}},
		{"null", `null`, config.CodeInvalid, []string{"not null"}},
		{"string", `"x"`, config.CodeInvalid, []string{"not a string"}},
		{"version string", `{"schema_version": "10"}`, config.CodeInvalid, []string{"schema_version", "an integer"}},
		{"version fraction", `{"schema_version": 9.5}`, config.CodeInvalid, []string{"schema_version", "9.5"}},
		{"version zero", `{"schema_version": 0}`, config.CodeInvalid, []string{"schema_version", "positive"}},
		{"version negative", `{"schema_version": -3}`, config.CodeInvalid, []string{"schema_version"}},
		{"version very negative", `{"schema_version": -1e999}`, config.CodeInvalid, []string{"schema_version"}},
		{"record not object", `{"record": ".ideate/record/"}`, config.CodeInvalid, []string{"record in", "an object, not a string"}},
		{"record null", `{"record": null}`, config.CodeInvalid, []string{"record in", "not null"}},
		{"record without path", `{"record": {}}`, config.CodeInvalid, []string{"record.path"}},
		{"record path number", `{"record": {"path": 3}}`, config.CodeInvalid, []string{"record.path", "not a number"}},
		{"record path empty", `{"record": {"path": ""}}`, config.CodeInvalid, []string{"record.path", "non-empty"}},
		{"record path blank", `{"record": {"path": "  "}}`, config.CodeInvalid, []string{"record.path"}},
		{"record path NUL", `{"record": {"path": "a\u0000b"}}`, config.CodeInvalid, []string{"record.path", "NUL"}},
		{"backend other", `{"backend": "sqlite"}`, config.CodeInvalid, []string{"backend", `"sqlite"`}},
		{"backend number", `{"backend": 1}`, config.CodeInvalid, []string{"backend"}},
		{"work_state array", `{"work_state": []}`, config.CodeInvalid, []string{"work_state in", "an object"}},
		{"work_state string", `{"work_state": "x"}`, config.CodeInvalid, []string{"work_state in"}},
		{"work_state path empty", `{"work_state": {"path": ""}}`, config.CodeInvalid, []string{"work_state.path"}},
		{"work_state path bool", `{"work_state": {"path": true}}`, config.CodeInvalid, []string{"work_state.path"}},
		{"claim_priming string", `{"work_state": {"claim_priming": "true"}}`, config.CodeInvalid, []string{"work_state.claim_priming"}},
		{"steering not object", `{"steering": true}`, config.CodeInvalid, []string{"steering in"}},
		{"steering enabled 1", `{"steering": {"enabled": 1}}`, config.CodeInvalid, []string{"steering.enabled", "true or false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, c.content)
			cfg, err := config.Load(dir, nil)
			if err == nil {
				t.Fatalf("no error; got %+v", cfg)
			}
			if got := apperr.CodeOf(err); got != c.code {
				t.Fatalf("code %s, want %s: %v", got, c.code, err)
			}
			msg := err.Error()
			for _, m := range append([]string{path}, c.mention...) {
				if !strings.Contains(msg, m) {
					t.Fatalf("%q does not mention %q", msg, m)
				}
			}
			if strings.Contains(apperr.Message(err), "\n") {
				t.Fatalf("message spans lines: %q", msg)
			}
			if b, _ := os.ReadFile(path); string(b) != c.content {
				t.Fatalf("file changed to %q", b)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("Load left files behind: %v", entries)
			}
		})
	}
}

func TestLoad_FileIsADirectory(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, config.FileName), 0o755)
	if _, err := config.Load(dir, nil); apperr.CodeOf(err) != config.CodeInvalid {
		t.Fatalf("got %v", err)
	}
}

func TestLoad_UnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	path := writeFile(t, dir, `{}`)
	os.Chmod(path, 0)
	if _, err := config.Load(dir, nil); apperr.CodeOf(err) != config.CodeRead {
		t.Fatalf("got %v", err)
	}
}

func TestLoad_BOMIsAccepted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "\xef\xbb\xbf{\"steering\": {\"enabled\": true}}")
	if c, err := config.Load(dir, nil); err != nil || !c.SteeringEnabled {
		t.Fatalf("%+v %v", c, err)
	}
}

// Git config (per clone) wins over the file (shared), which wins over the
// defaults.
func TestLoad_GitConfigOverrides(t *testing.T) {
	dir := gt.NewRepo(t)
	path := writeFile(t, dir, `{"work_state": {"claim_priming": true}, "steering": {"enabled": false}}`)
	load := func() *config.Config {
		t.Helper()
		repo, err := gitstore.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(repo.WorkTree, gitstore.LoadConfig(repo))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load()
	if c.SteeringEnabled || !c.ClaimPriming || c.Remote != "" || c.Source[config.KeySteeringEnabled] != path ||
		c.Source[config.KeyClaimPriming] != path || c.Source[config.KeyRemote] != config.SourceDefault {
		t.Fatalf("file only: %+v", c)
	}

	gt.Git(t, dir, "config", "ideate.steering", "true")
	gt.Git(t, dir, "config", "ideate.claimPriming", "off")
	gt.Git(t, dir, "config", "ideate.remote", "upstream")
	c = load()
	if !c.SteeringEnabled || c.ClaimPriming || c.Remote != "upstream" {
		t.Fatalf("overridden: %+v", c)
	}
	for _, k := range []string{config.KeySteeringEnabled, config.KeyClaimPriming, config.KeyRemote} {
		if c.Source[k] != config.SourceGit {
			t.Fatalf("source of %s = %q", k, c.Source[k])
		}
	}
	if c.Source[config.KeyRecordPath] != config.SourceDefault {
		t.Fatalf("record.path source %q", c.Source[config.KeyRecordPath])
	}

	// git's other spellings of a boolean
	for v, want := range map[string]bool{"yes": true, "1": true, "FALSE": false, "0": false, "on": true, "2": true} {
		gt.Git(t, dir, "config", "ideate.steering", v)
		if got := load().SteeringEnabled; got != want {
			t.Fatalf("ideate.steering=%s gave %v", v, got)
		}
	}

	// Without a file, git config still applies.
	gt.Git(t, dir, "config", "ideate.steering", "true")
	os.Remove(path)
	if c := load(); !c.SteeringEnabled || c.File != "" {
		t.Fatalf("no file: %+v", c)
	}
}

func TestLoad_GitConfigErrors(t *testing.T) {
	for _, kv := range [][2]string{{"ideate.steering", "maybe"}, {"ideate.claimPriming", "tru"}, {"ideate.remote", "--upload-pack=evil"}} {
		dir := gt.NewRepo(t)
		gt.Git(t, dir, "config", kv[0], kv[1])
		repo, _ := gitstore.Discover(dir)
		_, err := config.Load(dir, gitstore.LoadConfig(repo))
		if apperr.CodeOf(err) != config.CodeInvalid || !strings.Contains(err.Error(), kv[0]) || !strings.Contains(err.Error(), "git config") {
			t.Fatalf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(c *config.Config)
		code apperr.Code
		name string
	}{
		{func(c *config.Config) { c.SchemaVersion = 11 }, config.CodeVersion, "schema_version"},
		{func(c *config.Config) { c.SchemaVersion = 0 }, config.CodeInvalid, "schema_version"},
		{func(c *config.Config) { c.RecordPath = "" }, config.CodeInvalid, "record.path"},
		{func(c *config.Config) { c.Backend = "" }, config.CodeInvalid, "backend"},
		{func(c *config.Config) { c.WorkStatePath = " " }, config.CodeInvalid, "work_state.path"},
		{func(c *config.Config) { c.Remote = "-x"; c.Source[config.KeyRemote] = config.SourceGit }, config.CodeInvalid, "ideate.remote (from git config)"},
		{func(c *config.Config) { c.Remote = "a\nb" }, config.CodeInvalid, "ideate.remote"},
		{func(c *config.Config) { c.Source = nil; c.Backend = "x" }, config.CodeInvalid, "backend"},
	} {
		cfg := config.Default()
		c.mod(cfg)
		err := cfg.Validate()
		if apperr.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.name) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	cfg := config.Default()
	cfg.Remote = "git@example.com:team/repo.git"
	cfg.SchemaVersion = 9
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteDefault(t *testing.T) {
	var compact bytes.Buffer
	json.Indent(&compact, []byte(`{"schema_version":10,"record":{"path":".ideate/record/"},"backend":"local"}`), "", "  ")
	if config.DefaultFile != compact.String()+"\n" {
		t.Fatalf("DefaultFile is not the reference's pretty-printed file:\n%s", config.DefaultFile)
	}

	dir := t.TempDir()
	created, err := config.WriteDefault(dir)
	if err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	path := filepath.Join(dir, config.FileName)
	if b, _ := os.ReadFile(path); string(b) != config.DefaultFile {
		t.Fatalf("content %q", b)
	}
	c, err := config.Load(dir, nil)
	if err != nil || c.Legacy || c.Source[config.KeyBackend] != path {
		t.Fatalf("load after write: %+v %v", c, err)
	}
	d := config.Default()
	if c.SchemaVersion != d.SchemaVersion || c.RecordPath != d.RecordPath || c.Backend != d.Backend {
		t.Fatalf("written file does not load as the defaults: %+v", c)
	}

	// An existing file, even a broken one, is never overwritten.
	os.WriteFile(path, []byte("{broken"), 0o644)
	created, err = config.WriteDefault(dir)
	if err != nil || created {
		t.Fatalf("second: %v %v", created, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{broken" {
		t.Fatalf("overwritten: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}

	if _, err := config.WriteDefault(""); apperr.CodeOf(err) != apperr.Write {
		t.Fatalf("bare: %v", err)
	}
	if _, err := config.WriteDefault(filepath.Join(dir, "missing")); apperr.CodeOf(err) != apperr.Write {
		t.Fatalf("missing dir: %v", err)
	}
}

// Racers all succeed, exactly one creates, and a reader racing them never
// sees a partial file.
func TestWriteDefault_Race(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		var wg sync.WaitGroup
		var mu sync.Mutex
		creators := 0
		stop := make(chan struct{})
		readerErr := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					readerErr <- nil
					return
				default:
				}
				if _, err := config.Load(dir, nil); err != nil {
					readerErr <- err
					return
				}
			}
		}()
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				created, err := config.WriteDefault(dir)
				if err != nil {
					t.Error(err)
				}
				if created {
					mu.Lock()
					creators++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(stop)
		if err := <-readerErr; err != nil {
			t.Fatalf("a reader saw a partial file: %v", err)
		}
		if creators != 1 {
			t.Fatalf("%d creators", creators)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, config.FileName)); string(b) != config.DefaultFile {
			t.Fatalf("content %q", b)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
	}
}

// FuzzLoad: Load never panics, never changes the file, and fails only
// with this package's codes; what it accepts validates.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		config.DefaultFile, `{}`, ``, `null`, `[]`, `{"schema_version": 9}`, `{"schema_version": 11}`,
		`{"schema_version": 1e999}`, `{"record": {"path": ""}}`, `{"backend": "x"}`, `{"work_state": []}`,
		`{"work_state": {"path": "w/", "claim_priming": true}}`, `{"steering": {"enabled": true}}`,
		"\xef\xbb\xbf{}", `{"a":`, "{\"record\":{\"path\":\"\\u0000\"}}", `{"schema_version": -0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, config.FileName)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(dir, nil)
		if err != nil {
			switch apperr.CodeOf(err) {
			case config.CodeVersion, config.CodeParse, config.CodeInvalid:
			default:
				t.Fatalf("untyped error: %v", err)
			}
			if strings.TrimSpace(apperr.Message(err)) == "" {
				t.Fatal("empty message")
			}
		} else if verr := c.Validate(); verr != nil {
			t.Fatalf("Load accepted what Validate rejects: %v", verr)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
			t.Fatal("Load changed the file")
		}
	})
}

// The store's settings come from git config alone, parsed the way git
// parses them, and reach gitstore through StoreOptions.
func TestLoadGit_StoreSettings(t *testing.T) {
	dir := gt.NewRepo(t)
	repo, _ := gitstore.Discover(dir)
	writeFile(t, dir, `{"record": 7}`) // broken: LoadGit never reads it
	c, err := config.LoadGit(gitstore.LoadConfig(repo))
	if err != nil {
		t.Fatalf("LoadGit read the file: %v", err)
	}
	if d := cmp.Diff(storeDefaults(config.Default()), c); d != "" {
		t.Fatalf("no git config: (-want +got):\n%s", d)
	}
	gt.Git(t, dir, "config", "ideate.fsync", "yes")
	gt.Git(t, dir, "config", "ideate.lockTimeoutMs", "2k")
	gt.Git(t, dir, "config", "ideate.staleLockMs", "250")
	gt.Git(t, dir, "config", "ideate.maintenance", "off")
	gt.Git(t, dir, "config", "ideate.remote", "upstream")
	c, err = config.LoadGit(gitstore.LoadConfig(repo))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Fsync || c.LockTimeout != 2048*time.Millisecond || c.StaleLockAfter != 250*time.Millisecond || c.Maintenance || c.Remote != "upstream" {
		t.Fatalf("git config: %+v", c)
	}
	for _, k := range []string{config.KeyFsync, config.KeyLockTimeout, config.KeyStaleLock, config.KeyMaintenance, config.KeyRemote} {
		if c.Source[k] != config.SourceGit {
			t.Fatalf("source of %s = %q", k, c.Source[k])
		}
	}
	o := c.StoreOptions()
	if o.Lock != (gitstore.LockPolicy{Timeout: 2048 * time.Millisecond, StaleAfter: 250 * time.Millisecond, Fsync: true}) || o.Maintenance {
		t.Fatalf("StoreOptions = %+v", o)
	}
	// The process-wide switch wins over ideate.maintenance=true.
	gt.Git(t, dir, "config", "ideate.maintenance", "true")
	c, _ = config.LoadGit(gitstore.LoadConfig(repo))
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	if !c.StoreOptions().Maintenance {
		t.Fatal("maintenance off without the switch")
	}
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "1")
	if c.StoreOptions().Maintenance {
		t.Fatal("$GIT_IDEATE_NO_MAINTENANCE ignored")
	}
}

// A store setting git cannot parse, or one out of range, is an error
// naming the key; nothing falls back to a default silently.
func TestLoadGit_StoreSettingErrors(t *testing.T) {
	for _, kv := range [][2]string{
		{"ideate.fsync", "sometimes"}, {"ideate.maintenance", "2x"},
		{"ideate.lockTimeoutMs", "10s"}, {"ideate.lockTimeoutMs", "0"}, {"ideate.lockTimeoutMs", "-5"},
		{"ideate.staleLockMs", "lots"}, {"ideate.staleLockMs", "99999999999g"},
		{"ideate.remote", "-x"},
	} {
		dir := gt.NewRepo(t)
		gt.Git(t, dir, "config", kv[0], kv[1])
		repo, _ := gitstore.Discover(dir)
		for name, load := range map[string]func() error{
			"LoadGit": func() error { _, err := config.LoadGit(gitstore.LoadConfig(repo)); return err },
			"Load":    func() error { _, err := config.Load(dir, gitstore.LoadConfig(repo)); return err },
		} {
			err := load()
			if apperr.CodeOf(err) != config.CodeInvalid || !strings.Contains(err.Error(), kv[0]) || !strings.Contains(err.Error(), "git config") {
				t.Fatalf("%s with %s=%s: %v", name, kv[0], kv[1], err)
			}
		}
	}
}

func TestLoad_ExecutionMaxAttempts(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int
		code string
	}{
		{`{"record":{"path":"x"},"execution":{"max_attempts":5}}`, 5, ""},
		{`{"record":{"path":"x"}}`, 0, ""},
		{`{"record":{"path":"x"},"execution":{"max_attempts":0}}`, 0, "CONFIG_INVALID"},
		{`{"record":{"path":"x"},"execution":{"max_attempts":"3"}}`, 0, "CONFIG_INVALID"},
		{`{"record":{"path":"x"},"execution":{"max_attempts":2.5}}`, 0, "CONFIG_INVALID"},
		{`{"record":{"path":"x"},"execution":[]}`, 0, "CONFIG_INVALID"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".ideate.json"), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(dir, nil)
		if tc.code != "" {
			if string(apperr.CodeOf(err)) != tc.code {
				t.Errorf("%s: err %v, want %s", tc.file, err, tc.code)
			}
			continue
		}
		if err != nil || c.MaxAttempts != tc.want {
			t.Errorf("%s: %v %v", tc.file, c, err)
		}
	}
}
