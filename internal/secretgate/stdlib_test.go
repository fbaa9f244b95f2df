package secretgate

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// stdlibDirs are the standard-library trees whose non-test Go files must
// come through the gate untouched (apart from stdlibAllowed). Test files and
// testdata directories are skipped: they hold deliberately fake keys.
var stdlibDirs = []string{
	"net/http", // includes h2_bundle.go (cipher-suite names) and httptest
	"net/url",
	"net/mail",
	"net/smtp",
	"encoding/json",
	"encoding/base64",
	"encoding/pem",
	"strings",
	"strconv",
	"os",
	"crypto/tls",
	"crypto/x509",
	"crypto/rsa",
	"crypto/ecdsa",
	"database/sql",
	"text/template",
	"html/template",
	"go/ast",
	"go/parser",
	"go/printer",
	"regexp",
	"time",
	"unicode",
	"sort",
	"bufio",
	"fmt",
	"runtime/debug",
}

// stdlibAllowed lists the accepted findings, keyed "rule|path|text" (path
// relative to GOROOT/src) or "rule|path|*" for every finding of the rule in
// that file, each with its justification. Everything else is a failure.
var stdlibAllowed = map[string]string{
	// A Google Docs document id in a comment URL: 44 random base64url
	// characters, which no rule can tell apart from an API token.
	"high-entropy|net/http/h2_bundle.go|1oLhNg1skaWD4_DtaoCxdSRN5erEXrH-KnLrMwEpOtFY": "Google Docs id in a URL",
	// Real (test) key material in non-test files: a certificate and an RSA
	// private key whose PEM type is spelt "RSA TESTING KEY" to dodge
	// scanners, so rule 1 does not see it but the base64 lines are
	// redacted by high-entropy, as they should be.
	"high-entropy|net/http/internal/testcert/testcert.go|*": "embedded test certificate and RSA key",
	"high-entropy|crypto/x509/x509_test_import.go|*":        "embedded RSA test key (//go:build ignore program)",
	// A comment that spells out a URL with a password:
	// "http://username:p@ssword@google.com". Redacting it is the rule
	// working as intended.
	"connection-string-password|net/url/url.go|p@ssword": "example password in a URL",
}

type finding struct{ rule, text string }

// scanDetail runs the rules like Scan does and returns what each redacted.
func scanDetail(s string) []finding {
	var out []finding
	rules := ruleSet()
	for pass := 0; pass < maxPasses; pass++ {
		changed := false
		for i := range rules {
			spans := rules[i].find(s, nil)
			if len(spans) == 0 {
				continue
			}
			for _, sp := range spans {
				out = append(out, finding{rules[i].name, s[sp.lo:sp.hi]})
			}
			s = redact(s, spans, rules[i].marker)
			changed = true
		}
		if !changed {
			break
		}
	}
	return out
}

func TestStdlibNoFalsePositives(t *testing.T) {
	if testing.Short() {
		t.Skip("walks the Go source tree")
	}
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	files, bytes := 0, 0
	allowed := map[string]int{}
	seen := map[string]bool{}
	for _, dir := range stdlibDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			name := d.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if seen[rel] {
				return nil
			}
			seen[rel] = true
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			bytes += len(b)
			for _, f := range scanDetail(string(b)) {
				key := f.rule + "|" + rel + "|" + f.text
				why, ok := stdlibAllowed[key]
				if !ok {
					why, ok = stdlibAllowed[f.rule+"|"+rel+"|*"]
				}
				if ok {
					allowed[why]++
					continue
				}
				t.Errorf("false positive: %s", key)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("scanned %d files, %d bytes", files, bytes)
	for why, n := range allowed {
		t.Logf("allowed: %d × %s", n, why)
	}
	if files < 300 {
		t.Errorf("only %d files scanned", files)
	}
}
