module github.com/ideate/git-ideate

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/go-git/go-git/v5 v5.19.3
	github.com/google/go-cmp v0.7.0
	github.com/oklog/ulid/v2 v2.1.2
)

require (
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376 // indirect
	github.com/pjbgf/sha1cd v0.7.0 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
)
