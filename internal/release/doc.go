// Package release builds git ideate's release artifacts the way the
// release workflow does (.goreleaser.yaml): one archive per OS and
// architecture holding the binaries, the licence, the third-party notices
// (THIRD_PARTY_NOTICES: the licences of Go and of every module the
// binaries link, kept current by a test) and the README, and a checksums
// file. The launcher (bin/git-ideate) downloads these; its tests
// serve what Build writes, so the launcher and the release agree on names.
//
// # Names
//
//	git-ideate_<version>_<os>_<arch>.tar.gz   (windows: .zip)
//	git-ideate_<version>_checksums.txt        "<sha256>  <file>" lines
//
// # Reproducible
//
// Binaries are built with -trimpath, without VCS stamping, with the
// version and commit set by -ldflags and CGO as the target's Options say;
// archive entries carry the commit's time, fixed modes and no owner, and
// the gzip header no name or time. Two builds of one commit give the same
// bytes (TestBuild_Reproducible).
//
// # Versions
//
// Version is the one version of this source tree. plugin.json, the
// marketplace entry and the release tag (v<Version>) must equal it; a test
// keeps the manifests equal and the release workflow refuses a tag that
// differs.
package release
