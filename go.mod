module github.com/backtrail/backtrail

go 1.26

require (
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
)
