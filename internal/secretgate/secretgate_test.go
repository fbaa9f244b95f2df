package secretgate

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Fake credentials are generated at run time from a fixed seed, so this file
// contains no literal that looks like a real secret to a repository scanner.

const (
	b62    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url = b62 + "-_"
	b64std = b62 + "+/"
	upNum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	digits = "0123456789"
)

// fake returns a deterministic pseudo-random string of n bytes of alphabet.
func fake(seed uint64, n int, alphabet string) string {
	x := seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alphabet[(x>>11)%uint64(len(alphabet))]
	}
	return string(b)
}

func red(rule string) string { return Marker(rule) }

// Fake credentials, one or more per rule.
var (
	awsKeyID     = "AKIA" + strings.Repeat("Q7", 8)
	awsKeyID2    = "ASIA" + fake(2, 16, upNum)
	awsKeyID3    = "A3T" + "X" + fake(3, 16, upNum)
	awsSecret    = fake(4, 40, b64std)
	ghClassic    = "gh" + "p_" + fake(5, 36, b62)
	ghFine       = "github" + "_pat_" + fake(6, 22, b62) + "_" + fake(7, 59, b62)
	ghServer     = "gh" + "s_" + fake(8, 36, b62)
	anthropicKey = "sk-" + "ant-" + "api03-" + fake(9, 93, b64url) + "AA"
	openaiKey    = "sk-" + "proj-" + fake(10, 100, b64url)
	openaiLegacy = "sk-" + fake(11, 48, b62)
	slackTok     = "xox" + "b-" + fake(12, 12, digits) + "-" + fake(13, 13, digits) + "-" + fake(14, 24, b62)
	jwtTok       = b64u(`{"alg":"HS256","typ":"JWT"}`) + "." + b64u(`{"sub":"1234567890","name":"Ada","iat":1516239022}`) + "." + fake(15, 43, b64url)
	bearerTok    = fake(16, 40, b62) + "." + fake(17, 12, b62)
	dbPassword   = "S3cr" + fake(18, 12, b62)
	gitlabTok    = "gl" + "pat-" + fake(19, 20, b64url)
	googleKey    = "AI" + "za" + fake(20, 35, b64url)
	stripeKey    = "sk" + "_live_" + fake(21, 99, b62)
	npmTok       = "np" + "m_" + fake(22, 36, b62)
	slackHook    = "T" + fake(23, 10, upNum) + "/B" + fake(24, 10, upNum) + "/" + fake(25, 24, b62)
	entropyTok   = fake(26, 48, b62)
	entropyTok2  = fake(27, 64, b64url)
)

func b64u(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// pemBlock builds a fake PEM private-key block of the given type ("RSA ",
// "OPENSSH ", "" for PKCS #8).
func pemBlock(kind string, seed uint64) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "PRIVATE" + " KEY-----\n")
	for i := uint64(0); i < 6; i++ {
		b.WriteString(fake(seed+i, 64, b64std) + "\n")
	}
	b.WriteString(fake(seed+9, 22, b64std) + "==\n")
	b.WriteString("-----END " + kind + "PRIVATE" + " KEY-----")
	return b.String()
}

var wantRules = []string{
	"pem-private-key",
	"aws-access-key-id",
	"aws-secret-access-key",
	"github-token",
	"anthropic-api-key",
	"openai-api-key",
	"slack-token",
	"jwt",
	"bearer-token",
	"connection-string-password",
	"password-assignment",
	"gitlab-token",
	"google-api-key",
	"stripe-secret-key",
	"npm-token",
	"slack-webhook-url",
	"high-entropy",
}

func TestRules(t *testing.T) {
	got := Rules()
	if !reflect.DeepEqual(got, wantRules) {
		t.Fatalf("Rules() = %q\nwant %q", got, wantRules)
	}
	// The first ten and the last are the reference rules, in order.
	ref := []string{"pem-private-key", "aws-access-key-id", "aws-secret-access-key", "github-token",
		"anthropic-api-key", "openai-api-key", "slack-token", "jwt", "bearer-token",
		"connection-string-password", "high-entropy"}
	if !reflect.DeepEqual(append(got[:10:10], got[len(got)-1]), ref) {
		t.Fatalf("reference rules out of order: %q", got)
	}
	if len(got) > 32 {
		t.Fatalf("%d rules; Scan's counter array holds 32", len(got))
	}
	for _, name := range got {
		// A rule name is a token of the high-entropy alphabet inside its
		// marker; it must stay far below the 32-character minimum.
		if len(name) >= minTokenLen || strings.ContainsAny(name, "[]:") {
			t.Errorf("rule name %q", name)
		}
	}
	got[0] = "changed"
	if Rules()[0] != "pem-private-key" {
		t.Fatal("Rules returned the internal table")
	}
}

type positive struct {
	name string
	in   string
	want string
	reds []Redaction
}

func one(rule string) []Redaction { return []Redaction{{Rule: rule, Count: 1}} }

func positives() []positive {
	pem := pemBlock("RSA ", 100)
	pemOpenSSH := pemBlock("OPENSSH ", 200)
	pemPKCS8 := pemBlock("", 300)
	truncated := strings.SplitAfterN(pemBlock("EC ", 400), "\n", 4)
	return []positive{
		{"pem/rsa", "key:\n" + pem + "\nend", "key:\n" + red("pem-private-key") + "\nend", one("pem-private-key")},
		{"pem/openssh", pemOpenSSH, red("pem-private-key"), one("pem-private-key")},
		{"pem/pkcs8 in code", "k := `" + pemPKCS8 + "`", "k := `" + red("pem-private-key") + "`", one("pem-private-key")},
		{"pem/json escaped", `{"key":"` + strings.ReplaceAll(pem, "\n", `\n`) + `\n"}`,
			`{"key":"` + red("pem-private-key") + `\n"}`, one("pem-private-key")},
		{"pem/truncated", "paste: " + truncated[0] + truncated[1] + truncated[2] + "(cut)",
			"paste: " + red("pem-private-key") + "\n(cut)", one("pem-private-key")},

		{"aws-access-key-id/akia", "id " + awsKeyID + " end", "id " + red("aws-access-key-id") + " end", one("aws-access-key-id")},
		{"aws-access-key-id/asia in env", "AWS_ACCESS_KEY_ID=" + awsKeyID2, "AWS_ACCESS_KEY_ID=" + red("aws-access-key-id"), one("aws-access-key-id")},
		{"aws-access-key-id/a3t quoted", `"` + awsKeyID3 + `"`, `"` + red("aws-access-key-id") + `"`, one("aws-access-key-id")},

		{"aws-secret-access-key/ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = " + red("aws-secret-access-key"), one("aws-secret-access-key")},
		{"aws-secret-access-key/env", "export AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", "export AWS_SECRET_ACCESS_KEY=" + red("aws-secret-access-key") + "\n", one("aws-secret-access-key")},
		{"aws-secret-access-key/json", `{"SecretAccessKey": "` + awsSecret + `"}`, `{"SecretAccessKey": "` + red("aws-secret-access-key") + `"}`, one("aws-secret-access-key")},
		{"aws-secret-access-key/yaml newline", "secret_key:\n  " + awsSecret, "secret_key:\n  " + red("aws-secret-access-key"), one("aws-secret-access-key")},
		{"aws-secret-access-key/go", `secretKey := "` + awsSecret + `"`, `secretKey := "` + red("aws-secret-access-key") + `"`, one("aws-secret-access-key")},

		{"github-token/classic", "token " + ghClassic + ".", "token " + red("github-token") + ".", one("github-token")},
		{"github-token/fine-grained", "GH_TOKEN=" + ghFine, "GH_TOKEN=" + red("github-token"), one("github-token")},
		{"github-token/server", "x(" + ghServer + ")", "x(" + red("github-token") + ")", one("github-token")},

		{"anthropic-api-key", "ANTHROPIC_API_KEY=" + anthropicKey + " ok", "ANTHROPIC_API_KEY=" + red("anthropic-api-key") + " ok", one("anthropic-api-key")},
		{"openai-api-key/project", `key="` + openaiKey + `"`, `key="` + red("openai-api-key") + `"`, one("openai-api-key")},
		{"openai-api-key/legacy", "use " + openaiLegacy, "use " + red("openai-api-key"), one("openai-api-key")},

		{"slack-token", "SLACK_BOT_TOKEN: " + slackTok, "SLACK_BOT_TOKEN: " + red("slack-token"), one("slack-token")},

		{"jwt", "cookie session=" + jwtTok + "; Path=/", "cookie session=" + red("jwt") + "; Path=/", one("jwt")},
		{"jwt/in bearer header counts as jwt", "Authorization: Bearer " + jwtTok, "Authorization: Bearer " + red("jwt"), one("jwt")},

		{"bearer-token/header", "Authorization: Bearer " + bearerTok, "Authorization: Bearer " + red("bearer-token"), one("bearer-token")},
		{"bearer-token/curl", `curl -H "authorization: bearer ` + bearerTok + `" https://api.example.com/v1`,
			`curl -H "authorization: bearer ` + red("bearer-token") + `" https://api.example.com/v1`, one("bearer-token")},
		{"bearer-token/proxy json", `{"Proxy-Authorization": "Bearer ` + bearerTok + `=="}`,
			`{"Proxy-Authorization": "Bearer ` + red("bearer-token") + `"}`, one("bearer-token")},

		{"password-assignment/shell", "mysql --user=app password=hunter2 --db x", "mysql --user=app password=" + red("password-assignment") + " --db x", one("password-assignment")},
		{"password-assignment/yaml key", "  DB_PASSWORD: s3cretValue\n", "  DB_PASSWORD: " + red("password-assignment") + "\n", one("password-assignment")},
		{"password-assignment/env quoted", `export MYSQL_ROOT_PASSWORD="Tr0ub4dor&3"`, `export MYSQL_ROOT_PASSWORD="` + red("password-assignment") + `"`, one("password-assignment")},
		{"password-assignment/json", `{"password":"letmein","user":"x"}`, `{"password":"` + red("password-assignment") + `","user":"x"}`, one("password-assignment")},
		{"password-assignment/go", `passwd := "Zx9!qq"`, `passwd := "` + red("password-assignment") + `"`, one("password-assignment")},
		{"password-assignment/camel", "dbPassword => 'plainword'", "dbPassword => '" + red("password-assignment") + "'", one("password-assignment")},
		{"connection-string-password/brief example", "postgres://user:pass@host/db", "postgres://user:" + red("connection-string-password") + "@host/db", one("connection-string-password")},
		{"connection-string-password/postgres", "postgres://user:" + dbPassword + "@host/db", "postgres://user:" + red("connection-string-password") + "@host/db", one("connection-string-password")},
		{"connection-string-password/redis empty user", "REDIS_URL=redis://:" + dbPassword + "@cache:6379/0", "REDIS_URL=redis://:" + red("connection-string-password") + "@cache:6379/0", one("connection-string-password")},
		{"connection-string-password/at in password", "mongodb+srv://admin:p@" + dbPassword + "@cluster0.example.net/?retryWrites=true",
			"mongodb+srv://admin:" + red("connection-string-password") + "@cluster0.example.net/?retryWrites=true", one("connection-string-password")},
		{"connection-string-password/literal password", "postgres://app:password@localhost:5432/app", "postgres://app:" + red("connection-string-password") + "@localhost:5432/app", one("connection-string-password")},

		{"gitlab-token", "GITLAB_TOKEN=" + gitlabTok, "GITLAB_TOKEN=" + red("gitlab-token"), one("gitlab-token")},
		{"google-api-key", "?key=" + googleKey + "&q=1", "?key=" + red("google-api-key") + "&q=1", one("google-api-key")},
		{"stripe-secret-key", "stripe.Key = \"" + stripeKey + "\"", "stripe.Key = \"" + red("stripe-secret-key") + "\"", one("stripe-secret-key")},
		{"npm-token", "//registry.npmjs.org/:_authToken=" + npmTok, "//registry.npmjs.org/:_authToken=" + red("npm-token"), one("npm-token")},
		{"slack-webhook-url", "POST https://hooks.slack.com/services/" + slackHook + " done", "POST https://hooks.slack.com/services/" + red("slack-webhook-url") + " done", one("slack-webhook-url")},

		{"high-entropy/word", "the value " + entropyTok + " is set", "the value " + red("high-entropy") + " is set", one("high-entropy")},
		{"high-entropy/base64url", "api_token: '" + entropyTok2 + "'", "api_token: '" + red("high-entropy") + "'", one("high-entropy")},
		{"high-entropy/path segment", "/v1/objects/" + entropyTok + "/meta", "/v1/objects/" + red("high-entropy") + "/meta", one("high-entropy")},

		{"several rules, rule order", "a " + ghClassic + " b " + awsKeyID + " c " + entropyTok + " d " + awsKeyID2,
			"a " + red("github-token") + " b " + red("aws-access-key-id") + " c " + red("high-entropy") + " d " + red("aws-access-key-id"),
			[]Redaction{{"aws-access-key-id", 2}, {"github-token", 1}, {"high-entropy", 1}}},
		{"same secret twice", ghClassic + "\n" + ghClassic, red("github-token") + "\n" + red("github-token"), []Redaction{{"github-token", 2}}},
	}
}

func TestScanPositive(t *testing.T) {
	for _, tc := range positives() {
		t.Run(tc.name, func(t *testing.T) {
			got, reds := Scan(tc.in)
			if got != tc.want {
				t.Errorf("Scan(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(reds, tc.reds) {
				t.Errorf("redactions = %v, want %v", reds, tc.reds)
			}
			again, reds2 := Scan(got)
			if again != got || reds2 != nil {
				t.Errorf("not idempotent: %q %v", again, reds2)
			}
		})
	}
}

// negatives must come back unchanged with a nil report.
func negatives() map[string]string {
	sha1 := "9fceb02d0ae598e95dc970b74767f19372d61af8"
	sha256 := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	ulid := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	ulid2 := "01JDQ40AC2XK7B5R9M3N8P6T4S"
	uuid := "550e8400-e29b-41d4-a716-446655440000"
	sum := sha256Sum("hello")
	return map[string]string{
		"sha1":                    "commit " + sha1,
		"sha1 upper":              strings.ToUpper(sha1),
		"sha256":                  "sha256:" + sha256,
		"sha256 upper":            strings.ToUpper(sha256),
		"short sha":               "fixed in 9fceb02 and " + sha1[:12],
		"two shas":                sha1 + ".." + sha1,
		"ulid":                    ulid,
		"ulids joined":            ulid + "-" + ulid2 + "_" + ulid,
		"ulid slug":               "ideate/" + ulid + "-fix-login-flow-v2",
		"ulid slug upper tail":    "work_" + ulid + "-Refactor-Auth-Token-Cache-V2",
		"ulid with sha":           ulid + "-" + sha1,
		"uuid":                    uuid,
		"uuid upper":              strings.ToUpper(uuid),
		"uuid slug":               "session-" + uuid + "-Replay2",
		"tsx path":                "src/components/UserProfileSettingsPanel2.tsx",
		"go path":                 "/usr/local/go/src/net/http/h2_bundle.go:11457",
		"windows path":            `C:\Users\Ada\AppData\Local\Programs\Microsoft VS Code\Code.exe`,
		"deep path":               "packages/web-client/src/features/userProfileSettings/components/UserProfileSettingsPanel2/index.test.tsx",
		"url":                     "https://github.com/ideate/git-ideate/blob/main/docs/ARCHITECTURE.md#L10-L20",
		"url user only":           "https://user@example.com/path?q=1#frag",
		"url port":                "http://localhost:8080/api/v1/items?id=42&sort=desc",
		"url port and at":         "http://localhost:8080/users/@me",
		"ssh url":                 "ssh://git@github.com:22/ideate/git-ideate.git",
		"scp url":                 "git@github.com:ideate/git-ideate.git",
		"ipv6 url":                "http://[::1]:8080/healthz",
		"url query":               "https://example.com/search?q=UserProfileSettingsPanel2&page=2&per_page=100",
		"go printf dsn":           `dsn := fmt.Sprintf("postgres://%s:%s@%s:%d/%s", user, pass, host, port, db)`,
		"js template dsn":         "const url = `postgres://${user}:${password}@${host}:5432/app`",
		"python format dsn":       `url = f"postgresql://{user}:{password}@{host}/{db}"`,
		"doc dsn":                 "postgres://USER:<password>@HOST:5432/DB",
		"masked dsn":              "postgres://app:****@db.internal:5432/app",
		"env dsn":                 "redis://default:$REDIS_PASSWORD@cache:6379",
		"split scheme":            `parts := strings.SplitN(raw, "://", 2)`,
		"go code":                 "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n\tif err := s.handler.ServeHTTP(w, r); err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusInternalServerError)\n\t}\n}",
		"go long identifiers":     "func TestServerHandshakeTimeoutWithHTTP2Enabled(t *testing.T) { rewriteValueAMD64_OpAMD64VPABSQMasked256(v) }",
		"go cipher names":         "http2cipher_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, http2cipher_TLS_KRB5_WITH_RC4_128_MD5",
		"ts code":                 "export const UserProfileSettingsPanelComponent2: React.FC<Props> = ({ userId }) => {\n  const [state, setState] = useState<UserProfileSettingsState>(initialState);\n  return null;\n};",
		"ts long names":           "XMLHttpRequestUploadProgressEventTarget2 getServerSideRenderedComponentProps2Async",
		"python snake":            "def compute_the_rolling_average_of_request_latencies_v2(self, window_size_in_seconds=300):\n    return self._rolling_average_latency_calculator_instance_v2.compute()",
		"python screaming":        "MAX_NUMBER_OF_CONCURRENT_CONNECTIONS_PER_HOST_V2 = 128",
		"markdown":                "## Decision\n\nWe store the **agent process record** in git. See [the contract](docs/contract.md) and `ideate-record append --content -`.\n\n- Pros: durable, reviewable.\n- Cons: larger refs.",
		"base64 short":            base64.StdEncoding.EncodeToString([]byte("hello, world! 1234")),
		"base64 user pass":        "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:pass")),
		"kebab sk":                "task-ant-colony-simulation-framework and risk-assessment-report-2024-final and sk-spinner-double-bounce-effect",
		"task ids":                "disk-usage-monitor-v2-Rewrite and ask-the-user-before-deleting-Files-2",
		"bearer placeholder":      "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
		"password template":       "password=${DB_PASS} and DB_PASSWORD: <password>",
		"password no value":       "password: required",
		"password in passwd line": "groupname:password:GID:user_list",
		"password prose":          "set the password in the vault",
		"bearer angle":            "Authorization: Bearer <token>",
		"bearer var":              "Authorization: Bearer ${GITHUB_TOKEN}",
		"aws secret placeholder":  "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY",
		"aws secret sha":          "secret_sha = " + sha1,
		"secret path":             "secret_path = src/components/UserProfileSettingsPanel2.tsx",
		"aws account arn":         "arn:aws:iam::123456789012:role/DeploymentRole-Production-2024",
		"pem markers in code":     "const header = \"-----BEGIN RSA PRIVATE" + " KEY-----\"\nconst footer = \"-----END RSA PRIVATE" + " KEY-----\"",
		"pem marker alone":        "look for -----BEGIN OPENSSH PRIVATE" + " KEY----- in the file",
		"github placeholder":      "GITHUB_TOKEN=gh" + "p_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"slack placeholder":       "xox" + "b-your-bot-token-here",
		"go.sum":                  "golang.org/x/net v0.57.0 h1:" + sum + "\ngolang.org/x/net v0.57.0/go.mod h1:" + sum,
		"sri":                     `<script integrity="sha512-` + fake(30, 86, b64std) + `==">`,
		"docker digest":           "image@sha256:" + sha256,
		"semver and dates":        "v1.26.8 2024-11-05T12:34:56.789Z go1.26.8 linux/amd64",
		"json record":             `{"id":"` + ulid + `","kind":"decision","claim":"Use RE2 for the gate","refs":[{"rel":"supersedes","id":"` + ulid2 + `"}]}`,
		"existing markers":        "a " + red("github-token") + " b " + red("connection-string-password"),
		"marker in dsn":           "postgres://user:" + red("connection-string-password") + "@host/db",
		"marker after bearer":     "Authorization: Bearer " + red("bearer-token"),
		"marker after aws secret": "aws_secret_access_key = " + red("aws-secret-access-key"),
		"empty":                   "",
	}
}

// sha256Sum returns a go.sum-style base64 digest without importing
// crypto for it: any 32 bytes will do.
func sha256Sum(s string) string {
	b := []byte(fake(uint64(len(s))+40, 32, b62))
	return base64.StdEncoding.EncodeToString(b)
}

func TestScanNegative(t *testing.T) {
	for name, in := range negatives() {
		t.Run(name, func(t *testing.T) {
			got, reds := Scan(in)
			if got != in || reds != nil {
				t.Errorf("Scan(%q)\n= %q, %v; want unchanged, nil", in, got, reds)
			}
		})
	}
}

func TestMarkersNeverRematched(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r, func(t *testing.T) {
			for _, in := range []string{
				red(r),
				"x" + red(r) + "y",
				"postgres://u:" + red(r) + "@h/db",
				"Authorization: Bearer " + red(r),
				"aws_secret_access_key = " + red(r),
				"sk-" + red(r),
				strings.Repeat(red(r), 3),
			} {
				if got, reds := Scan(in); got != in || reds != nil {
					t.Errorf("Scan(%q) = %q, %v", in, got, reds)
				}
			}
		})
	}
}

func TestPEMBlockIsOneRedaction(t *testing.T) {
	two := pemBlock("RSA ", 500) + "\n\nand\n\n" + pemBlock("", 600)
	tests := []struct {
		name, in, want string
		count          int
	}{
		{"one block", pemBlock("RSA ", 500), red("pem-private-key"), 1},
		{"two blocks", two, red("pem-private-key") + "\n\nand\n\n" + red("pem-private-key"), 2},
		{"crlf", strings.ReplaceAll(pemBlock("EC ", 700), "\n", "\r\n"), red("pem-private-key"), 1},
		{"encrypted headers", strings.Replace(pemBlock("RSA ", 800), "KEY-----\n", "KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"+strings.ToUpper(fake(801, 32, "0123456789abcdef"))+"\n\n", 1), red("pem-private-key"), 1},
		{"pgp", "-----BEGIN PGP PRIVATE" + " KEY BLOCK-----\n\n" + fake(900, 64, b64std) + "\n" + fake(901, 64, b64std) + "\n=" + fake(902, 4, b64std) + "\n-----END PGP PRIVATE" + " KEY BLOCK-----", red("pem-private-key"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reds := Scan(tc.in)
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
			if want := []Redaction{{"pem-private-key", tc.count}}; !reflect.DeepEqual(reds, want) {
				t.Errorf("redactions %v, want %v", reds, want)
			}
		})
	}
}

func TestCountsSameSecretTwice(t *testing.T) {
	tests := []struct {
		name, secret, rule string
	}{
		{"aws key id", awsKeyID, "aws-access-key-id"},
		{"github", ghClassic, "github-token"},
		{"openai", openaiLegacy, "openai-api-key"},
		{"jwt", jwtTok, "jwt"},
		{"high entropy", entropyTok, "high-entropy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := "first " + tc.secret + " then again: " + tc.secret + "."
			got, reds := Scan(in)
			want := "first " + red(tc.rule) + " then again: " + red(tc.rule) + "."
			if got != want {
				t.Errorf("got %q", got)
			}
			if w := []Redaction{{tc.rule, 2}}; !reflect.DeepEqual(reds, w) {
				t.Errorf("redactions %v, want %v", reds, w)
			}
		})
	}
}

func TestFields(t *testing.T) {
	claim := "deploy with " + awsKeyID
	content := "token " + ghClassic + " and " + awsKeyID2 + "\n" + pemBlock("", 1000)
	clean := "nothing here"
	var nilField *string
	reds := Fields(&claim, nilField, &content, &clean)
	if claim != "deploy with "+red("aws-access-key-id") {
		t.Errorf("claim = %q", claim)
	}
	if content != "token "+red("github-token")+" and "+red("aws-access-key-id")+"\n"+red("pem-private-key") {
		t.Errorf("content = %q", content)
	}
	if clean != "nothing here" {
		t.Errorf("clean = %q", clean)
	}
	want := []Redaction{{"pem-private-key", 1}, {"aws-access-key-id", 2}, {"github-token", 1}}
	if !reflect.DeepEqual(reds, want) {
		t.Errorf("Fields = %v, want %v", reds, want)
	}
	if r := Fields(&clean); r != nil {
		t.Errorf("clean Fields = %v, want nil", r)
	}
	if r := Fields(); r != nil {
		t.Errorf("Fields() = %v", r)
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		a, b []Redaction
		want []Redaction
	}{
		{"both nil", nil, nil, nil},
		{"a only", []Redaction{{"jwt", 1}}, nil, []Redaction{{"jwt", 1}}},
		{"rule order", []Redaction{{"high-entropy", 1}, {"jwt", 2}}, []Redaction{{"pem-private-key", 1}, {"jwt", 3}},
			[]Redaction{{"pem-private-key", 1}, {"jwt", 5}, {"high-entropy", 1}}},
		{"unknown kept last", []Redaction{{"custom", 1}, {"jwt", 1}}, []Redaction{{"custom", 2}, {"other", 1}},
			[]Redaction{{"jwt", 1}, {"custom", 3}, {"other", 1}}},
		{"zero dropped", []Redaction{{"jwt", 0}}, []Redaction{{"slack-token", 0}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := append([]Redaction(nil), tc.a...)
			got := Merge(tc.a, tc.b)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Merge = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(a, tc.a) {
				t.Errorf("Merge modified a")
			}
		})
	}
}

func TestRedactionJSON(t *testing.T) {
	_, reds := Scan("x " + awsKeyID)
	b, err := json.Marshal(reds)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[{"pattern":"aws-access-key-id","count":1}]` {
		t.Errorf("json = %s", b)
	}
}

func TestHighEntropyBoundaries(t *testing.T) {
	tok := entropyTok // 48 characters
	tests := []struct {
		name, in, want string
	}{
		{"whole token", tok, red("high-entropy")},
		{"dot splits", "a." + tok + ".b", "a." + red("high-entropy") + ".b"},
		{"token chars join", "id_" + tok, red("high-entropy")},
		{"31 chars", tok[:31], tok[:31]},
		{"31 chars twice split by slash", tok[:31] + "/" + tok[17:48], tok[:31] + "/" + tok[17:48]},
		{"no digit", strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'q'
			}
			return r
		}, tok), ""},
		{"lower only", strings.ToLower(tok), strings.ToLower(tok)},
		{"low entropy", strings.Repeat("aB3", 12), strings.Repeat("aB3", 12)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Scan(tc.in)
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if got != want {
				t.Errorf("Scan(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

func TestWordShape(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"rewriteValueAMD64_OpCvt8toMask64x8", 2.75},
		{"HTTPServer", 5},    // HTTP | Server
		{"aB3", 1},           // a | B | 3
		{"UserProfile", 5.5}, // User | Profile
		{"abcd_efgh", 4},
		{"", 0},
	}
	for _, tc := range tests {
		if got := wordShape(tc.in); got != tc.want {
			t.Errorf("wordShape(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// seeds for the fuzz target: every positive and negative case, and all of
// them joined.
func fuzzSeeds() []string {
	var seeds []string
	var all strings.Builder
	for _, p := range positives() {
		seeds = append(seeds, p.in)
		all.WriteString(p.in + "\n")
	}
	for _, n := range negatives() {
		seeds = append(seeds, n)
		all.WriteString(n + "\n")
	}
	seeds = append(seeds, all.String(),
		"postgres://u:p@"+red("jwt")+"@h",
		"a://b:c:d@e",
		"-----BEGIN RSA PRIVATE"+" KEY-----\n"+red("high-entropy")+"\n-----END RSA PRIVATE"+" KEY-----",
		"secret = "+awsSecret+awsSecret,
		"sk-ant-"+"sk-"+fake(31, 30, b62),
		"[REDACTED:",
		"[REDACTED:sk-00]0",
	)
	return seeds
}

func FuzzScanIdempotent(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, reds := Scan(in)
		again, reds2 := Scan(out)
		if again != out {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n out2 %q", in, out, again)
		}
		if reds2 != nil {
			t.Fatalf("second scan reported %v on %q", reds2, out)
		}
		// No rule finds anything in the output.
		for _, r := range ruleSet() {
			if sp := r.find(out, nil); len(sp) > 0 {
				t.Fatalf("rule %s still matches %q in %q", r.name, out[sp[0].lo:sp[0].hi], out)
			}
		}
		// Every redaction added exactly one marker, and none was swallowed.
		total := 0
		for _, r := range reds {
			total += r.Count
		}
		if n0, n1 := strings.Count(in, "[REDACTED:"), strings.Count(out, "[REDACTED:"); n1 != n0+total {
			t.Fatalf("markers %d -> %d with %d redactions: %q -> %q", n0, n1, total, in, out)
		}
		// No raw pattern (before its accept check) reaches into a marker.
		assertNoMarkerMatched(t, out)
	})
}

// assertNoMarkerMatched runs every anchored rule's regexp at every trigger
// position of s, without the accept check, and fails if a secret group
// overlaps a redaction marker of one of the rules.
func assertNoMarkerMatched(t *testing.T, s string) {
	t.Helper()
	var marks []span
	for _, name := range Rules() {
		mk := Marker(name)
		for i := 0; ; {
			j := strings.Index(s[i:], mk)
			if j < 0 {
				break
			}
			marks = append(marks, span{i + j, i + j + len(mk)})
			i += j + len(mk)
		}
	}
	if len(marks) == 0 {
		return
	}
	for _, r := range ruleSet() {
		a := r.match
		if a == nil {
			continue
		}
		for _, trig := range a.triggers {
			ts := newTrigState(trig, a.fold)
			for i := 0; i < len(s); {
				at := ts.next(s, i)
				if at < 0 {
					break
				}
				i = at + 1
				m := a.re().FindStringSubmatchIndex(s[at:])
				if m == nil || m[2*a.group] < 0 {
					continue
				}
				lo, hi := at+m[2*a.group], at+m[2*a.group+1]
				for _, mk := range marks {
					if lo < mk.hi && mk.lo < hi {
						t.Fatalf("rule %s pattern reaches marker %q: %q", r.name, s[mk.lo:mk.hi], s[lo:hi])
					}
				}
			}
		}
	}
}

func TestFuzzSeedsProperties(t *testing.T) {
	// The fuzz properties, run over the seeds as an ordinary test.
	for _, s := range fuzzSeeds() {
		out, _ := Scan(s)
		if again, r := Scan(out); again != out || r != nil {
			t.Errorf("not idempotent on %q", s)
		}
		assertNoMarkerMatched(t, out)
	}
}

func TestTriggerSearch(t *testing.T) {
	tests := []struct {
		s, lit string
		fold   bool
		want   []int
	}{
		{"xx AUTHORIZATION authorization", "authorization", true, []int{3, 17}},
		{"Authorization", "authorization", true, []int{0}},
		{"authorizatio", "authorization", true, nil},
		{"aaaaAWS aWs", "aws", true, []int{4, 8}},
		{"a", "aws", true, nil},
		{"sEcReT", "secret", true, []int{0}},
		{"a://b://", "://", false, []int{1, 5}},
		{"sk-sk-ask-", "sk-", false, []int{0, 3, 7}},
		{"sk-ant-sk-ant", "sk-ant-", false, []int{0}},
		{"eyJeyJ", "eyJ", false, []int{0, 3}},
		{"-----BEGIN-----BEGI", "-----BEGIN", false, []int{0}},
		{"", "gh", false, nil},
	}
	for _, tc := range tests {
		ts := newTrigState(tc.lit, tc.fold)
		var got []int
		for i := 0; ; {
			j := ts.next(tc.s, i)
			if j < 0 {
				break
			}
			got = append(got, j)
			i = j + 1
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("occurrences of %q in %q = %v, want %v", tc.lit, tc.s, got, tc.want)
		}
	}
}

func TestConcurrentScan(t *testing.T) {
	in := strings.Join([]string{cleanRecord, ghClassic, "Authorization: Bearer " + bearerTok, entropyTok}, "\n")
	want, _ := Scan(in)
	done := make(chan string)
	for g := 0; g < 8; g++ {
		go func() {
			var out string
			for k := 0; k < 50; k++ {
				out, _ = Scan(in)
			}
			done <- out
		}()
	}
	for g := 0; g < 8; g++ {
		if got := <-done; got != want {
			t.Errorf("concurrent Scan = %q, want %q", got, want)
		}
	}
}

// Rules lists the rule names in order.
func Rules() []string {
	rules := ruleSet()
	names := make([]string, len(rules))
	for i := range rules {
		names[i] = rules[i].name
	}
	return names
}
