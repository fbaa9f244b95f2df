package secretgate

import (
	"strings"
	"testing"
	"time"
)

// cleanRecord is a typical clean record body of about 300 characters: prose,
// a ULID, a git SHA, a path and a URL.
const cleanRecord = "Decided to keep the record store append-only (see 01JDQ3Z5E8X9K2M4N6P8R0T1VW). " +
	"Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 moved the writer into internal/store/append.go; " +
	"the reader in src/components/UserProfileSettingsPanel2.tsx stays as is. " +
	"Docs: https://github.com/ideate/git-ideate/blob/main/README.md"

func BenchmarkInit(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if rules := buildRules(); len(rules) == 0 {
			b.Fatal("no rules")
		}
	}
}

func BenchmarkScanClean300(b *testing.B) {
	Scan("") // build the rule table outside the timing
	b.SetBytes(int64(len(cleanRecord)))
	b.ReportAllocs()
	for b.Loop() {
		if _, r := Scan(cleanRecord); r != nil {
			b.Fatal(r)
		}
	}
}

func BenchmarkScanSecret300(b *testing.B) {
	rec := cleanRecord[:220] + " token " + ghClassic + " end"
	Scan("")
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, r := Scan(rec); r == nil {
			b.Fatal("no redaction")
		}
	}
}

// mixedText returns about n bytes of prose, Go and TypeScript code, paths,
// ids and JSON, with one fake secret of a rotating kind every ~8 KB.
func mixedText(n int) (string, int) {
	chunks := []string{
		cleanRecord + "\n\n",
		"func (s *Store) Append(ctx context.Context, r Record) (Result, error) {\n\tif err := s.lock(ctx); err != nil {\n\t\treturn Result{}, fmt.Errorf(\"append %s: %w\", r.ID, err)\n\t}\n\tdefer s.unlock()\n\treturn s.write(r)\n}\n\n",
		"export async function fetchUserProfileSettings(userId: string): Promise<UserProfileSettings> {\n  const res = await fetch(`/api/v2/users/${userId}/settings`, { headers: { Accept: 'application/json' } });\n  return res.json();\n}\n\n",
		`{"id":"01JDQ40AC2XK7B5R9M3N8P6T4S","kind":"decision","claim":"Use RE2","scope":"secretgate","refs":[{"rel":"supersedes","id":"01JDQ3Z5E8X9K2M4N6P8R0T1VW"}]}` + "\n",
		"- Ran `go test ./...` on linux/amd64 with go1.26.8; 412 passed, 0 failed.\n- UUID 550e8400-e29b-41d4-a716-446655440000 maps to session 7.\n\n",
	}
	secrets := []string{
		"AWS key " + awsKeyID + " leaked\n",
		"Authorization: Bearer " + bearerTok + "\n",
		"DATABASE_URL=postgres://app:" + dbPassword + "@db:5432/app\n",
		"OPENAI_API_KEY=" + openaiLegacy + "\n",
		"blob " + entropyTok + "\n",
		pemBlock("RSA ", 77) + "\n",
	}
	var b strings.Builder
	planted, next := 0, 8<<10
	for i := 0; b.Len() < n; i++ {
		b.WriteString(chunks[i%len(chunks)])
		if b.Len() >= next {
			b.WriteString(secrets[planted%len(secrets)])
			planted++
			next += 8 << 10
		}
	}
	return b.String(), planted
}

func BenchmarkScanMixed1MB(b *testing.B) {
	text, planted := mixedText(1 << 20)
	Scan("")
	if _, r := Scan(text); total(r) != planted {
		b.Fatalf("found %v, planted %d", r, planted)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(text)
	}
}

func total(r []Redaction) int {
	n := 0
	for _, x := range r {
		n += x.Count
	}
	return n
}

func TestMixedTextFindsExactlyThePlanted(t *testing.T) {
	text, planted := mixedText(256 << 10)
	out, r := Scan(text)
	if total(r) != planted {
		t.Fatalf("redactions %v, planted %d", r, planted)
	}
	if again, r2 := Scan(out); again != out || r2 != nil {
		t.Fatal("not idempotent on mixed text")
	}
}

// TestAdversarialInputsLinear scans long texts built to make a naive
// matcher quadratic (a trigger every few bytes, each starting an attempt
// that could run to the end of the text). Linear work finishes each in
// milliseconds; quadratic work would take minutes.
func TestAdversarialInputsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("slow on purpose if broken")
	}
	const n = 256 << 10
	header := "-----BEGIN RSA PRIVATE" + " KEY-----\n"
	inputs := map[string]string{
		"eyJ run":         strings.Repeat("eyJ", n/3),
		"secret words":    strings.Repeat("secret aws ", n/11),
		"sk- run":         strings.Repeat("sk-", n/3),
		"sk-ant- run":     strings.Repeat("sk-ant-", n/7),
		"scheme run":      strings.Repeat("://a", n/4),
		"user run":        "://" + strings.Repeat("a", n),
		"password run":    "://u:" + strings.Repeat("a@", n/2),
		"pem headers":     strings.Repeat(header, n/len(header)),
		"pem no footer":   strings.Repeat(header+fake(1, 64, b64std)+"\n", n/100),
		"pem body no end": header + strings.Repeat("A", n),
		"authorization":   strings.Repeat("Authorization: Bearer ", n/22),
		"gh run":          strings.Repeat("gh", n/2),
		"AKIA run":        strings.Repeat("AKIA", n/4),
		"xoxb run":        strings.Repeat("xoxb-", n/5),
		"token run":       strings.Repeat("aB3-", n/4),
		"base64 slashes":  strings.Repeat(fake(2, 40, b62)+"/", n/41),
		"digest run":      "h1:" + strings.Repeat(fake(3, 40, b62)+"/", n/41),
		"high bytes":      strings.Repeat("\xff\xfe", n/2),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out, _ := Scan(in)
			Scan(out)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s: %v for %d bytes", name, d, len(in))
			}
		})
	}
}
