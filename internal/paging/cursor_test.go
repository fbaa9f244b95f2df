package paging

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
)

const (
	testULID   = "01JABCDEFGHJKMNPQRSTVWXYZ0"
	testTime   = "2026-08-06T10:00:00.000Z"
	testFilter = "scope=foo"
	// testFP is fingerprint("record", testFilter), computed independently:
	// printf 'record\0scope=foo' | sha256sum | cut -c1-16
	testFP = "19ee39ae1f218221"
)

// cursorMessages is every sentence DecodeCursor may return. Because the set is
// closed and fixed, no error can echo a cursor back.
var cursorMessages = map[string]bool{
	msgCursorEmpty:    true,
	msgCursorTooLong:  true,
	msgCursorEncoding: true,
	msgCursorPayload:  true,
	msgCursorVersion:  true,
	msgCursorKind:     true,
	msgCursorKeyLen:   true,
	msgCursorKeyEmpty: true,
	msgCursorFilter:   true,
	msgCursorMismatch: true,
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// recordPayload is the canonical payload of a record cursor under testFilter,
// with the member list given so that tests can alter one part of it.
func recordPayload(members string) string { return "{" + members + "}" }

const validMembers = `"v":1,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"`

// cursorWithSpareBits returns a valid record cursor whose payload length is
// not a multiple of 3, so that its last character carries unused bits.
func cursorWithSpareBits(t *testing.T) string {
	t.Helper()
	for i := 0; i < 3; i++ {
		c := EncodeCursor("record", testFilter, []string{testULID + strings.Repeat("X", i)})
		if len(c)%4 != 0 {
			return c
		}
	}
	t.Fatal("no cursor with spare bits found")
	return ""
}

// cursorWithURLChars returns a valid record cursor that contains '-' or '_',
// so that its standard-alphabet twin contains '+' or '/'.
func cursorWithURLChars(t *testing.T) (url, std string) {
	t.Helper()
	for i := 0; i < 4096; i++ {
		key := []string{testULID + string(rune('?'+i%64)) + strings.Repeat("~", i/64)}
		c := EncodeCursor("record", testFilter, key)
		if strings.ContainsAny(c, "-_") {
			raw, err := base64.RawURLEncoding.DecodeString(c)
			if err != nil {
				t.Fatal(err)
			}
			return c, base64.RawStdEncoding.EncodeToString(raw)
		}
	}
	t.Fatal("no cursor with URL-alphabet characters found")
	return "", ""
}

func TestEncodeCursor_Golden(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		filter  string
		key     []string
		payload string
		cursor  string
	}{
		{
			name:    "Record_OneKey",
			kind:    "record",
			filter:  testFilter,
			key:     []string{testULID},
			payload: `{"v":1,"k":"record","p":["01JABCDEFGHJKMNPQRSTVWXYZ0"],"f":"19ee39ae1f218221"}`,
			cursor:  "eyJ2IjoxLCJrIjoicmVjb3JkIiwicCI6WyIwMUpBQkNERUZHSEpLTU5QUVJTVFZXWFlaMCJdLCJmIjoiMTllZTM5YWUxZjIxODIyMSJ9",
		},
		{
			name:    "Work_TwoKeys",
			kind:    "work",
			filter:  "status=open\x00tenant=t1",
			key:     []string{testTime, testULID},
			payload: `{"v":1,"k":"work","p":["2026-08-06T10:00:00.000Z","01JABCDEFGHJKMNPQRSTVWXYZ0"],"f":"b374109fc9c260ef"}`,
			cursor:  "eyJ2IjoxLCJrIjoid29yayIsInAiOlsiMjAyNi0wOC0wNlQxMDowMDowMC4wMDBaIiwiMDFKQUJDREVGR0hKS01OUFFSU1RWV1hZWjAiXSwiZiI6ImIzNzQxMDlmYzljMjYwZWYifQ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeCursor(tc.kind, tc.filter, tc.key)
			if got != tc.cursor {
				t.Errorf("EncodeCursor = %q, want %q", got, tc.cursor)
			}
			if b64(tc.payload) != tc.cursor {
				t.Errorf("golden payload and cursor disagree")
			}
		})
	}
}

func TestEncodeCursor_CraftedTemplateIsValid(t *testing.T) {
	c := b64(recordPayload(validMembers))
	if c != EncodeCursor("record", testFilter, []string{testULID}) {
		t.Fatalf("the crafted template is not the canonical cursor")
	}
	key, err := DecodeCursor(c, "record", testFilter, 1)
	if err != nil || !slices.Equal(key, []string{testULID}) {
		t.Fatalf("DecodeCursor(template) = %v, %v", key, err)
	}
}

func TestDecodeCursor_RoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		filter string
		key    []string
	}{
		{"Record_ScopeFilter", "record", testFilter, []string{testULID}},
		{"Record_EmptyFilter", "record", "", []string{testULID}},
		{"Record_IDAndScope", "record", "id=" + testULID + "\x00scope=foo", []string{testULID}},
		{"Work_CreatedAtAndID", "work", "status=open\x00tenant=t1", []string{testTime, testULID}},
		{"Steering_UpdatedAtAndID", "steering", "include_history=false", []string{testTime, "st-1"}},
		{"Key_SpecialCharacters", "record", testFilter, []string{`a"b\c<d>&e` + "\u2028é😀\t"}},
		{"Filter_Unicode", "record", "scope=日本語😀", []string{testULID}},
		{"Key_Long", "record", testFilter, []string{strings.Repeat("Z", 1000)}},
		{"Key_ThreeElements", "other", testFilter, []string{"a", "b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := EncodeCursor(tc.kind, tc.filter, tc.key)
			if strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
				t.Fatalf("cursor %q has characters outside base64url", c)
			}
			if again := EncodeCursor(tc.kind, tc.filter, tc.key); again != c {
				t.Fatalf("EncodeCursor is not deterministic")
			}
			got, err := DecodeCursor(c, tc.kind, tc.filter, len(tc.key))
			if err != nil {
				t.Fatalf("DecodeCursor: %v", err)
			}
			if !slices.Equal(got, tc.key) {
				t.Fatalf("DecodeCursor = %q, want %q", got, tc.key)
			}
		})
	}
}

func TestDecodeCursor_Malformed(t *testing.T) {
	valid := EncodeCursor("record", testFilter, []string{testULID})
	spare := cursorWithSpareBits(t)
	urlC, stdC := cursorWithURLChars(t)
	rawSpare, _ := base64.RawURLEncoding.DecodeString(spare)

	// Flip the lowest bit of the last character: the bytes it carries stay
	// the same on a lenient decoder, but the text is no longer canonical.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, spare[len(spare)-1])
	nonCanonicalTail := spare[:len(spare)-1] + string(alphabet[last^1])

	truncTo1Mod4 := valid[:len(valid)-1]
	for len(truncTo1Mod4)%4 != 1 {
		truncTo1Mod4 = truncTo1Mod4[:len(truncTo1Mod4)-1]
	}

	tests := []struct {
		name    string
		cursor  string
		kind    string // "record" when empty
		keyLen  int    // 1 when zero
		wantMsg string // any SCHEMA sentence when empty
	}{
		// Encoding.
		{name: "Empty", cursor: "", wantMsg: msgCursorEmpty},
		{name: "TooLong", cursor: strings.Repeat("A", maxCursorLen+1), wantMsg: msgCursorTooLong},
		{name: "Padding_OneEquals", cursor: valid + "=", wantMsg: msgCursorEncoding},
		{name: "Padding_StdPadded", cursor: base64.URLEncoding.EncodeToString(rawSpare), wantMsg: msgCursorEncoding},
		{name: "Alphabet_PlusSlash", cursor: stdC, wantMsg: msgCursorEncoding},
		{name: "Alphabet_PlusInside", cursor: valid[:5] + "+" + valid[6:], wantMsg: msgCursorEncoding},
		{name: "Alphabet_SlashInside", cursor: valid[:5] + "/" + valid[6:], wantMsg: msgCursorEncoding},
		{name: "Foreign_Bang", cursor: valid + "!", wantMsg: msgCursorEncoding},
		{name: "Foreign_Dot", cursor: valid[:7] + "." + valid[8:], wantMsg: msgCursorEncoding},
		{name: "Foreign_Space", cursor: valid[:10] + " " + valid[10:], wantMsg: msgCursorEncoding},
		{name: "Foreign_TrailingNewline", cursor: valid + "\n", wantMsg: msgCursorEncoding},
		{name: "Foreign_NonASCII", cursor: valid + "é", wantMsg: msgCursorEncoding},
		{name: "NonCanonicalTail", cursor: nonCanonicalTail, wantMsg: msgCursorEncoding},
		{name: "Truncated_ImpossibleLength", cursor: truncTo1Mod4, wantMsg: msgCursorEncoding},
		{name: "Truncated_ByOne", cursor: valid[:len(valid)-1]},
		{name: "Truncated_ByFour", cursor: valid[:len(valid)-4], wantMsg: msgCursorPayload},
		{name: "Truncated_Half", cursor: valid[:len(valid)/2]},
		{name: "TrailingGarbage_FourChars", cursor: valid + "AAAA", wantMsg: msgCursorPayload},
		{name: "TrailingGarbage_OneChar", cursor: urlC + "A"},

		// Payload JSON.
		{name: "NotJSON_Text", cursor: b64("hello"), wantMsg: msgCursorPayload},
		{name: "NotJSON_Binary", cursor: b64("\x00\xff\xfe"), wantMsg: msgCursorPayload},
		{name: "Shape_ReferenceArray", cursor: b64(`["` + testULID + `"]`), wantMsg: msgCursorPayload},
		{name: "Shape_String", cursor: b64(`"x"`), wantMsg: msgCursorPayload},
		{name: "Shape_Null", cursor: b64(`null`), wantMsg: msgCursorPayload},
		{name: "Shape_EmptyObject", cursor: b64(`{}`), wantMsg: msgCursorPayload},
		{name: "Shape_MissingFingerprint", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + `"]}`), wantMsg: msgCursorPayload},
		{name: "Shape_MissingVersion", cursor: b64(`{"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_KeyNull", cursor: b64(`{"v":1,"k":"record","p":null,"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_KeyString", cursor: b64(`{"v":1,"k":"record","p":"` + testULID + `","f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_KeyNumber", cursor: b64(`{"v":1,"k":"record","p":[1],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_KeyNested", cursor: b64(`{"v":1,"k":"record","p":[["` + testULID + `"]],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_VersionString", cursor: b64(`{"v":"1","k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_VersionFloat", cursor: b64(`{"v":1.0,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_ExtraField", cursor: b64(recordPayload(validMembers + `,"x":1`)), wantMsg: msgCursorPayload},
		{name: "Shape_DuplicateField", cursor: b64(recordPayload(validMembers + `,"f":"` + testFP + `"`)), wantMsg: msgCursorPayload},
		{name: "Shape_Reordered", cursor: b64(`{"k":"record","v":1,"p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_UpperCaseMember", cursor: b64(`{"V":1,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_Whitespace", cursor: b64(`{"v": 1,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_TrailingNewline", cursor: b64(recordPayload(validMembers) + "\n"), wantMsg: msgCursorPayload},
		{name: "Shape_TrailingJSON", cursor: b64(recordPayload(validMembers) + "{}"), wantMsg: msgCursorPayload},
		{name: "Shape_EscapedKind", cursor: b64(`{"v":1,"k":"\u0072ecord","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},
		{name: "Shape_InvalidUTF8Key", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + "\xff" + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorPayload},

		// Meaning.
		{name: "Version_Two", cursor: b64(`{"v":2,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorVersion},
		{name: "Version_Zero", cursor: b64(`{"v":0,"k":"record","p":["` + testULID + `"],"f":"` + testFP + `"}`), wantMsg: msgCursorVersion},
		{name: "Kind_Work", cursor: EncodeCursor("work", testFilter, []string{testULID}), wantMsg: msgCursorKind},
		{name: "Kind_Case", cursor: EncodeCursor("Record", testFilter, []string{testULID}), wantMsg: msgCursorKind},
		{name: "Kind_Empty", cursor: EncodeCursor("", testFilter, []string{testULID}), wantMsg: msgCursorKind},
		{name: "KeyLen_TooMany", cursor: EncodeCursor("record", testFilter, []string{testTime, testULID}), wantMsg: msgCursorKeyLen},
		{name: "KeyLen_TooFew", cursor: EncodeCursor("work", testFilter, []string{testULID}), kind: "work", keyLen: 2, wantMsg: msgCursorKeyLen},
		{name: "KeyLen_EmptyArray", cursor: EncodeCursor("record", testFilter, []string{}), wantMsg: msgCursorKeyLen},
		{name: "KeyLen_NilKey", cursor: EncodeCursor("record", testFilter, nil), wantMsg: msgCursorKeyLen},
		{name: "KeyLen_EmptyArrayWantZero", cursor: EncodeCursor("record", testFilter, []string{}), keyLen: -1, wantMsg: msgCursorKeyLen},
		{name: "KeyEmpty_Only", cursor: EncodeCursor("record", testFilter, []string{""}), wantMsg: msgCursorKeyEmpty},
		{name: "KeyEmpty_Second", cursor: EncodeCursor("work", testFilter, []string{testTime, ""}), kind: "work", keyLen: 2, wantMsg: msgCursorKeyEmpty},
		{name: "KeyEmpty_First", cursor: EncodeCursor("work", testFilter, []string{"", testULID}), kind: "work", keyLen: 2, wantMsg: msgCursorKeyEmpty},
		{name: "Fingerprint_UpperCase", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + `"],"f":"` + strings.ToUpper(testFP) + `"}`), wantMsg: msgCursorFilter},
		{name: "Fingerprint_Short", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + `"],"f":"19ee"}`), wantMsg: msgCursorFilter},
		{name: "Fingerprint_Empty", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + `"],"f":""}`), wantMsg: msgCursorFilter},
		{name: "Fingerprint_NotHex", cursor: b64(`{"v":1,"k":"record","p":["` + testULID + `"],"f":"19ee39ae1f21822g"}`), wantMsg: msgCursorFilter},
		// Shape checks come before the filter check: a cursor that is
		// malformed and also from another filter is SCHEMA, not a mismatch.
		{name: "ShapeBeforeFilter", cursor: EncodeCursor("record", "scope=bar", []string{testTime, testULID}), wantMsg: msgCursorKeyLen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, keyLen := tc.kind, tc.keyLen
			if kind == "" {
				kind = "record"
			}
			switch keyLen {
			case 0:
				keyLen = 1
			case -1:
				keyLen = 0
			}
			key, err := DecodeCursor(tc.cursor, kind, testFilter, keyLen)
			if key != nil {
				t.Errorf("key = %q, want nil", key)
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error = %v, want an *apperr.Error", err)
			}
			if ae.Code != apperr.Schema {
				t.Errorf("code = %s, want %s (%s)", ae.Code, apperr.Schema, ae.Msg)
			}
			if tc.wantMsg != "" && ae.Msg != tc.wantMsg {
				t.Errorf("message = %q, want %q", ae.Msg, tc.wantMsg)
			}
			if !cursorMessages[ae.Msg] {
				t.Errorf("message %q is not one of the fixed cursor sentences", ae.Msg)
			}
			if len(tc.cursor) > 0 && strings.Contains(err.Error(), tc.cursor) {
				t.Errorf("error %q echoes the cursor", err)
			}
		})
	}
}

func TestDecodeCursor_FilterMismatch(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		key        []string
		mintFilter string
		readFilter string
	}{
		{"Record_OtherScope", "record", []string{testULID}, "scope=foo", "scope=bar"},
		{"Record_FilterAdded", "record", []string{testULID}, "", "scope=foo"},
		{"Record_FilterDropped", "record", []string{testULID}, "scope=foo", ""},
		{"Record_ScopeCase", "record", []string{testULID}, "scope=foo", "scope=Foo"},
		{"Work_OtherStatus", "work", []string{testTime, testULID}, "status=open\x00tenant=t1", "status=done\x00tenant=t1"},
		{"Work_OtherTenant", "work", []string{testTime, testULID}, "status=open\x00tenant=t1", "status=open\x00tenant=t2"},
		{"Work_FieldOrder", "work", []string{testTime, testULID}, "a=1\x00b=2", "b=2\x00a=1"},
		{"Steering_History", "steering", []string{testTime, "st-1"}, "include_history=false", "include_history=true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := EncodeCursor(tc.kind, tc.mintFilter, tc.key)
			key, err := DecodeCursor(c, tc.kind, tc.readFilter, len(tc.key))
			if key != nil {
				t.Errorf("key = %q, want nil", key)
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error = %v, want an *apperr.Error", err)
			}
			if ae.Code != apperr.CursorMismatch {
				t.Errorf("code = %s, want %s", ae.Code, apperr.CursorMismatch)
			}
			if ae.Msg != msgCursorMismatch {
				t.Errorf("message = %q, want %q", ae.Msg, msgCursorMismatch)
			}
			if strings.Contains(err.Error(), c) {
				t.Errorf("error %q echoes the cursor", err)
			}
			// The same cursor is still good under the filter it was minted for.
			if _, err := DecodeCursor(c, tc.kind, tc.mintFilter, len(tc.key)); err != nil {
				t.Errorf("DecodeCursor under the minting filter: %v", err)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	tests := []struct {
		name         string
		kindA, filtA string
		kindB, filtB string
	}{
		{"SeparatorKeepsKindAndFilterApart", "ab", "c", "a", "bc"},
		{"KindMatters", "record", testFilter, "work", testFilter},
		{"FilterMatters", "record", "scope=a", "record", "scope=b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := fingerprint(tc.kindA, tc.filtA), fingerprint(tc.kindB, tc.filtB)
			if a == b {
				t.Fatalf("fingerprints collide: %s", a)
			}
			if !isFingerprint(a) || !isFingerprint(b) {
				t.Fatalf("fingerprint shape: %q %q", a, b)
			}
		})
	}
	t.Run("KnownValue", func(t *testing.T) {
		if got := fingerprint("record", testFilter); got != testFP {
			t.Fatalf("fingerprint = %s, want %s", got, testFP)
		}
	})
}
