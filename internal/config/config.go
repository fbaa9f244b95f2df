package config

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
)

// FileName is the shared config file at the top of the working tree.
const FileName = ".ideate.json"

// MaxFile caps the .ideate.json read.
const MaxFile = 1 << 20

// SchemaVersion is the newest config schema this version understands.
const SchemaVersion = 10

// The defaults.
const (
	DefaultRecordPath    = ".ideate/record/"
	DefaultBackend       = "local"
	DefaultWorkStatePath = ".ideate-work/"
)

// DefaultFile is what WriteDefault writes: the reference's fresh file,
// pretty-printed with a 2-space indent and a trailing newline.
const DefaultFile = `{
  "schema_version": 10,
  "record": {
    "path": ".ideate/record/"
  },
  "backend": "local"
}
`

// Error codes of this package.
const (
	CodeVersion apperr.Code = "CONFIG_VERSION" // written by a newer git ideate
	CodeParse   apperr.Code = "CONFIG_PARSE"   // not JSON
	CodeInvalid apperr.Code = "CONFIG_INVALID" // a value of the wrong type or not allowed
	CodeRead    apperr.Code = "CONFIG_READ"    // the file exists but cannot be read
)

// Sources other than a file path, as found in Config.Source.
const (
	SourceDefault = "default"
	SourceGit     = "git config"
)

// The keys of Config.Source: the file's dotted key names, and for the
// settings only git config holds, the name of their git key without
// "ideate.".
const (
	KeySchemaVersion   = "schema_version"
	KeyRecordPath      = "record.path"
	KeyBackend         = "backend"
	KeyWorkStatePath   = "work_state.path"
	KeyClaimPriming    = "work_state.claim_priming"
	KeySteeringEnabled = "steering.enabled"
	KeyRemote          = "remote"
	KeyFsync           = "fsync"
	KeyLockTimeout     = "lockTimeoutMs"
	KeyStaleLock       = "staleLockMs"
	KeyMaintenance     = "maintenance"
	KeyMaxAttempts     = "execution.max_attempts"
)

// The git config keys (section "ideate"): the first two override the
// file; the others exist only there (per clone).
const (
	GitSteering     = "ideate.steering"
	GitClaimPriming = "ideate.claimPriming"
	GitRemote       = "ideate.remote"
	GitFsync        = "ideate.fsync"
	GitLockTimeout  = "ideate.lockTimeoutMs"
	GitStaleLock    = "ideate.staleLockMs"
	GitMaintenance  = "ideate.maintenance"
)

var allKeys = []string{KeySchemaVersion, KeyRecordPath, KeyBackend, KeyWorkStatePath, KeyClaimPriming,
	KeySteeringEnabled, KeyRemote, KeyFsync, KeyLockTimeout, KeyStaleLock, KeyMaintenance, KeyMaxAttempts}

// gitOnly names the git key of each setting the file does not hold.
var gitOnly = map[string]string{KeyRemote: GitRemote, KeyFsync: GitFsync, KeyLockTimeout: GitLockTimeout,
	KeyStaleLock: GitStaleLock, KeyMaintenance: GitMaintenance}

// Config is the effective configuration of one clone.
type Config struct {
	SchemaVersion   int
	RecordPath      string
	Backend         string
	WorkStatePath   string
	ClaimPriming    bool
	SteeringEnabled bool
	// Remote is ideate.remote (git config only): the remote `sync` uses
	// and the board verbs defer to; "" when unset.
	Remote string

	// The store's own settings (git config only; see gitstore.Options):
	// Fsync (ideate.fsync) syncs objects and ref updates to disk;
	// LockTimeout (ideate.lockTimeoutMs) is how long a held ref lock is
	// waited for; StaleLockAfter (ideate.staleLockMs) is how old an
	// unheld lock must be before it is broken; Maintenance
	// (ideate.maintenance) starts background repacks.
	Fsync          bool
	LockTimeout    time.Duration
	StaleLockAfter time.Duration
	Maintenance    bool

	// MaxAttempts is execution.max_attempts: how many attempts a task
	// gets before it is escalated (0: unset here; the revision loop's
	// default, or standards.md's max_attempts, applies).
	MaxAttempts int

	// Source maps each Key* to where its value came from: the file's
	// path, SourceGit or SourceDefault.
	Source map[string]string

	// File is the path of the .ideate.json read, "" when there was none.
	File string
	// Legacy is set for a schema-9 file: one with neither "record" nor
	// "backend". It is read as is (and never rewritten).
	Legacy bool
	// Unknown holds the keys of the file this version does not know,
	// dotted ("record.extra") and verbatim. They are kept, not used.
	Unknown map[string]json.RawMessage
}

// Default returns the defaults, every value from SourceDefault.
func Default() *Config {
	c := &Config{SchemaVersion: SchemaVersion, RecordPath: DefaultRecordPath, Backend: DefaultBackend,
		WorkStatePath: DefaultWorkStatePath, LockTimeout: gitstore.DefaultLockTimeout,
		StaleLockAfter: gitstore.DefaultStaleAfter, Maintenance: true,
		Source: map[string]string{}, Unknown: map[string]json.RawMessage{}}
	for _, k := range allKeys {
		c.Source[k] = SourceDefault
	}
	return c
}

// LoadGit returns the configuration a clone's git config alone makes: the
// defaults, overridden by git's ideate.* keys, validated; the file is not
// read. It is what opening the store and choosing a remote need, so a
// broken .ideate.json stops only the commands that read the file.
func LoadGit(git *gitstore.Config) (*Config, error) {
	c := Default()
	if git != nil {
		if err := c.applyGit(git); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// StoreOptions are the settings the store is opened with:
// gitstore.DefaultOptions (which a process may turn maintenance off in)
// with c's lock policy and, when c turns it off, no maintenance.
func (c *Config) StoreOptions() gitstore.Options {
	o := gitstore.DefaultOptions()
	o.Lock = gitstore.LockPolicy{Timeout: c.LockTimeout, StaleAfter: c.StaleLockAfter, Fsync: c.Fsync}
	o.Maintenance = o.Maintenance && c.Maintenance
	return o
}

// Load returns the configuration of the working tree at workTree ("" for a
// bare repository, which has no file): the defaults, overridden by
// workTree/.ideate.json, overridden by git's ideate.* keys (git may be
// nil). It never writes the file.
func Load(workTree string, git *gitstore.Config) (*Config, error) {
	c := Default()
	if workTree != "" {
		path := filepath.Join(workTree, FileName)
		b, err := osproc.ReadRegular(path, MaxFile)
		switch {
		case err == nil:
			if err := c.parse(path, b); err != nil {
				return nil, err
			}
		case errors.Is(err, fs.ErrNotExist):
		default:
			if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
				return nil, apperr.New(CodeInvalid, "%s is a directory, not a JSON file", path)
			}
			return nil, apperr.Wrap(CodeRead, err, "cannot read %s: %v", path, cause(err))
		}
	}
	if git != nil {
		if err := c.applyGit(git); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse reads the file's JSON into c, checking types; values are checked
// by Validate.
func (c *Config) parse(path string, b []byte) error {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a BOM some editors add
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return parseError(path, b, err)
	}
	if kind := kindOf(raw); kind != "an object" {
		return apperr.New(CodeInvalid, "%s must hold a JSON object, not %s", path, kind)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return apperr.Wrap(CodeParse, err, "%s cannot be read as a JSON object: %v", path, err)
	}
	c.File = path
	invalid := func(field, want string, v json.RawMessage) error {
		return apperr.New(CodeInvalid, "%s in %s must be %s, not %s", field, path, want, kindOf(v))
	}

	// The version first: a newer file may have any shape.
	if v, ok := top[KeySchemaVersion]; ok {
		if kindOf(v) != "a number" {
			return invalid(KeySchemaVersion, "an integer", v)
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return invalid(KeySchemaVersion, "an integer", v)
		}
		if f > SchemaVersion {
			return apperr.New(CodeVersion, "%s has schema_version %s: it was written by a newer git ideate (this one reads up to %d); upgrade git ideate", path, v, SchemaVersion)
		}
		if f != math.Trunc(f) || f < math.MinInt32 {
			return apperr.New(CodeInvalid, "%s in %s must be an integer, not %s", KeySchemaVersion, path, v)
		}
		c.SchemaVersion = int(f)
		c.Source[KeySchemaVersion] = path
	}

	_, hasRecord := top["record"]
	_, hasBackend := top[KeyBackend]
	c.Legacy = !hasRecord && !hasBackend

	// Fixed order, so that a file with several problems always names the
	// same one.
	for _, key := range []string{"record", KeyBackend, "work_state", "steering", "execution"} {
		v, ok := top[key]
		if !ok {
			continue
		}
		switch key {
		case "record":
			obj, ok := object(v)
			if !ok {
				return invalid("record", "an object", v)
			}
			p, ok := obj["path"]
			if !ok {
				return apperr.New(CodeInvalid, "%s in %s is missing: record needs a path", KeyRecordPath, path)
			}
			s, ok := str(p)
			if !ok {
				return invalid(KeyRecordPath, "a non-empty string", p)
			}
			c.RecordPath, c.Source[KeyRecordPath] = s, path
			c.unknown(obj, "record.", "path")
		case KeyBackend:
			s, ok := str(v)
			if !ok {
				return invalid(KeyBackend, `"local"`, v)
			}
			c.Backend, c.Source[KeyBackend] = s, path
		case "work_state":
			obj, ok := object(v)
			if !ok {
				return invalid("work_state", "an object", v)
			}
			if p, ok := obj["path"]; ok {
				s, ok := str(p)
				if !ok {
					return invalid(KeyWorkStatePath, "a non-empty string", p)
				}
				c.WorkStatePath, c.Source[KeyWorkStatePath] = s, path
			}
			if p, ok := obj["claim_priming"]; ok {
				b, ok := boolean(p)
				if !ok {
					return invalid(KeyClaimPriming, "true or false", p)
				}
				c.ClaimPriming, c.Source[KeyClaimPriming] = b, path
			}
			c.unknown(obj, "work_state.", "path", "claim_priming")
		case "steering":
			obj, ok := object(v)
			if !ok {
				return invalid("steering", "an object", v)
			}
			if p, ok := obj["enabled"]; ok {
				b, ok := boolean(p)
				if !ok {
					return invalid(KeySteeringEnabled, "true or false", p)
				}
				c.SteeringEnabled, c.Source[KeySteeringEnabled] = b, path
			}
			c.unknown(obj, "steering.", "enabled")
		case "execution":
			obj, ok := object(v)
			if !ok {
				return invalid("execution", "an object", v)
			}
			if p, ok := obj["max_attempts"]; ok {
				n, err := strconv.Atoi(string(p))
				if kindOf(p) != "a number" || err != nil || n < 1 || n > 99 {
					return apperr.New(CodeInvalid, "%s in %s must be a whole number from 1 to 99, not %s", KeyMaxAttempts, path, p)
				}
				c.MaxAttempts, c.Source[KeyMaxAttempts] = n, path
			}
			c.unknown(obj, "execution.", "max_attempts")
		}
	}
	c.unknown(top, "", KeySchemaVersion, "record", KeyBackend, "work_state", "steering", "execution")
	return nil
}

func (c *Config) unknown(obj map[string]json.RawMessage, prefix string, known ...string) {
next:
	for k, v := range obj {
		for _, kn := range known {
			if k == kn {
				continue next
			}
		}
		c.Unknown[prefix+k] = v
	}
}

// parseError is the CONFIG_PARSE error for err, with where it happened.
func parseError(path string, b []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return apperr.Wrap(CodeParse, err, "%s is not valid JSON: %v", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return apperr.Wrap(CodeParse, err, "%s is empty, which is not valid JSON", path)
	}
	// Offset counts the bytes read, the offending one included; at the end
	// of the input it is the length.
	off := int(min(max(se.Offset, 0), int64(len(b))))
	if off > 0 && se.Offset <= int64(len(b)) && !strings.HasPrefix(se.Error(), "unexpected end") {
		off--
	}
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return apperr.Wrap(CodeParse, err, "%s is not valid JSON at line %d, column %d (byte offset %d): %s", path, line, col, off, se.Error())
}

// kindOf names the JSON type of a valid value, for messages.
func kindOf(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return "a number"
}

func object(v json.RawMessage) (map[string]json.RawMessage, bool) {
	if kindOf(v) != "an object" {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, false
	}
	return m, true
}

func str(v json.RawMessage) (string, bool) {
	if kindOf(v) != "a string" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

func boolean(v json.RawMessage) (bool, bool) {
	switch kindOf(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// applyGit lets the clone's git config override the file.
func (c *Config) applyGit(g *gitstore.Config) error {
	for _, o := range []struct {
		key, sourceKey string
		dst            *bool
	}{
		{GitSteering, KeySteeringEnabled, &c.SteeringEnabled},
		{GitClaimPriming, KeyClaimPriming, &c.ClaimPriming},
		{GitFsync, KeyFsync, &c.Fsync},
		{GitMaintenance, KeyMaintenance, &c.Maintenance},
	} {
		v, ok := g.Get("ideate", strings.TrimPrefix(o.key, "ideate."))
		if !ok {
			continue
		}
		b, ok := gitBool(v)
		if !ok {
			return apperr.New(CodeInvalid, "git config %s must be a boolean (true/false, yes/no, on/off, 1/0), not %q", o.key, v)
		}
		*o.dst, c.Source[o.sourceKey] = b, SourceGit
	}
	for _, o := range []struct {
		key, sourceKey string
		dst            *time.Duration
	}{
		{GitLockTimeout, KeyLockTimeout, &c.LockTimeout},
		{GitStaleLock, KeyStaleLock, &c.StaleLockAfter},
	} {
		v, ok := g.Get("ideate", strings.TrimPrefix(o.key, "ideate."))
		if !ok {
			continue
		}
		ms, ok := gitstore.ParseInt(v)
		if !ok || ms <= 0 || ms > maxMillis {
			return apperr.New(CodeInvalid, "git config %s must be a positive whole number of milliseconds (k, m and g suffixes allowed), not %q", o.key, v)
		}
		*o.dst, c.Source[o.sourceKey] = time.Duration(ms)*time.Millisecond, SourceGit
	}
	if v, ok := g.Get("ideate", "remote"); ok {
		c.Remote, c.Source[KeyRemote] = v, SourceGit
	}
	return nil
}

// maxMillis is the largest millisecond count a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// gitBool parses a boolean the way git does: true/yes/on, false/no/off
// (any case), an integer (non-zero is true), and a bare key (true).
func gitBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return false, false
	}
	return n != 0, true
}

// Validate checks every value, naming the field and where it came from.
func (c *Config) Validate() error {
	if c.SchemaVersion > SchemaVersion {
		return apperr.New(CodeVersion, "schema_version %d%s was written by a newer git ideate (this one reads up to %d); upgrade git ideate", c.SchemaVersion, c.from(KeySchemaVersion), SchemaVersion)
	}
	if c.SchemaVersion < 1 {
		return c.invalid(KeySchemaVersion, "must be a positive integer, not %d", c.SchemaVersion)
	}
	if err := c.checkPath(KeyRecordPath, c.RecordPath); err != nil {
		return err
	}
	if c.Backend != DefaultBackend {
		return c.invalid(KeyBackend, "must be %q (the only backend), not %q", DefaultBackend, c.Backend)
	}
	if err := c.checkPath(KeyWorkStatePath, c.WorkStatePath); err != nil {
		return err
	}
	for key, d := range map[string]time.Duration{KeyLockTimeout: c.LockTimeout, KeyStaleLock: c.StaleLockAfter} {
		if d <= 0 {
			return c.invalid(key, "must be a positive duration, not %v", d)
		}
	}
	if c.Remote != "" {
		if strings.HasPrefix(c.Remote, "-") {
			return c.invalid(KeyRemote, "must not start with '-', got %q", c.Remote)
		}
		if hasControl(c.Remote) || strings.TrimSpace(c.Remote) != c.Remote {
			return c.invalid(KeyRemote, "must be a remote name or URL without surrounding spaces or control characters, not %q", c.Remote)
		}
	}
	return nil
}

func (c *Config) checkPath(key, p string) error {
	if strings.TrimSpace(p) == "" {
		return c.invalid(key, "must be a non-empty path")
	}
	if strings.ContainsRune(p, 0) {
		return c.invalid(key, "must not contain a NUL character")
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

func (c *Config) invalid(key, format string, args ...any) error {
	name := key
	if g, ok := gitOnly[key]; ok {
		name = g
	}
	return apperr.New(CodeInvalid, "%s%s %s", name, c.from(key), fmt.Sprintf(format, args...))
}

// from says where key's value came from, for messages.
func (c *Config) from(key string) string {
	switch src := c.Source[key]; src {
	case "", SourceDefault:
		return ""
	case SourceGit:
		return " (from git config)"
	default:
		return " in " + src
	}
}

// WriteDefault creates workTree/.ideate.json holding DefaultFile when no
// such file exists, and reports whether it did. It never overwrites: the
// content is written to a private temporary file, then hard-linked into
// place, which fails when the name exists; so two racers both succeed,
// exactly one creates, and no reader ever sees a partial file. Where hard
// links are not supported it creates the file with O_CREATE|O_EXCL.
func WriteDefault(workTree string) (created bool, err error) {
	if workTree == "" {
		return false, apperr.New(apperr.Write, "a bare repository has no working tree to hold %s", FileName)
	}
	path := filepath.Join(workTree, FileName)
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(workTree, FileName+".tmp-"+hex.EncodeToString(rnd[:]))
	if err := writeExclusive(tmp); err != nil {
		return false, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", tmp, cause(err))
	}
	defer os.Remove(tmp)
	lerr := os.Link(tmp, path)
	if lerr == nil {
		return true, nil
	}
	if errors.Is(lerr, fs.ErrExist) {
		return false, nil
	}
	// No hard links here: create in place.
	if err := writeExclusive(path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", path, cause(err))
	}
	return true, nil
}

// writeExclusive creates path (O_CREATE|O_EXCL) holding DefaultFile; a
// failed write removes what it created.
func writeExclusive(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(DefaultFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
