package remote

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// Location is a parsed remote URL.
type Location struct {
	Scheme string // "s3" or "file"
	// S3
	Bucket, Prefix, Endpoint, Region string
	// file
	Dir string
}

// URLError is a remote URL that does not parse.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("invalid remote URL %q: %s", e.URL, e.Reason) }

// Hint shows the forms that work.
func (e *URLError) Hint() string {
	return "use s3://BUCKET[/PREFIX][?endpoint=URL&region=REGION] or file:///ABSOLUTE/PATH (or an absolute path)"
}

// ParseURL parses s3://bucket/prefix?endpoint=…&region=…, file:///path or
// an absolute path.
func ParseURL(s string) (Location, error) {
	bad := func(reason string) (Location, error) { return Location{}, &URLError{URL: redactURL(s), Reason: reason} }
	if strings.HasPrefix(s, "/") {
		return Location{Scheme: "file", Dir: filepath.Clean(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("it does not parse")
	}
	if u.User != nil {
		return bad("credentials do not belong in the URL; ckpt reads them from the AWS environment (AWS_ACCESS_KEY_ID, ~/.aws/credentials)")
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return bad("a file URL names no host: file:///path")
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return bad("a file URL needs an absolute path: file:///path")
		}
		if u.RawQuery != "" {
			return bad("a file URL takes no query")
		}
		return Location{Scheme: "file", Dir: filepath.Clean(u.Path)}, nil
	case "s3":
		if u.Host == "" {
			return bad("no bucket: s3://BUCKET/PREFIX")
		}
		if !validBucket(u.Host) {
			return bad("bucket names are 3-63 characters of lowercase letters, digits, '.' and '-'")
		}
		prefix := strings.Trim(u.Path, "/")
		if prefix != "" {
			for _, c := range strings.Split(prefix, "/") {
				if c == "" || c == "." || c == ".." {
					return bad("the prefix has an empty, '.' or '..' component")
				}
			}
			prefix += "/"
		}
		loc := Location{Scheme: "s3", Bucket: u.Host, Prefix: prefix}
		q := u.Query()
		for k := range q {
			switch k {
			case "endpoint", "region":
			default:
				return bad(fmt.Sprintf("unknown parameter %q (known: endpoint, region)", k))
			}
		}
		loc.Endpoint, loc.Region = q.Get("endpoint"), q.Get("region")
		if loc.Endpoint != "" {
			e, err := url.Parse(loc.Endpoint)
			if err != nil || e.Host == "" || (e.Scheme != "http" && e.Scheme != "https") {
				return bad("endpoint must be a URL like https://s3.example.com or http://127.0.0.1:7070")
			}
			if e.User != nil {
				return bad("credentials do not belong in the endpoint; ckpt reads them from the AWS environment")
			}
		}
		return loc, nil
	case "":
		return bad("it is not absolute; use file:///ABSOLUTE/PATH or s3://BUCKET/PREFIX")
	default:
		return bad(fmt.Sprintf("unknown scheme %q", u.Scheme))
	}
}

func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// userinfo matches "user:password@" anywhere in a URL (the authority, an
// endpoint in the query, a scp-like form).
var userinfo = regexp.MustCompile(`[^/?#&=:@\s]*:[^/?#&@\s]*@`)

// redactURL hides every user:password@ in a URL, so that an error never
// repeats a secret.
func redactURL(s string) string {
	// Escaped forms first (an endpoint in the query is often escaped).
	for i := 0; i < 3; i++ {
		u, err := url.QueryUnescape(s)
		if err != nil || u == s {
			break
		}
		if userinfo.MatchString(u) {
			s = u
		}
		if !strings.Contains(u, "%") {
			break
		}
	}
	return userinfo.ReplaceAllString(s, "***@")
}

// String gives the location's canonical URL.
func (l Location) String() string {
	if l.Scheme == "file" {
		return "file://" + filepath.ToSlash(l.Dir)
	}
	s := "s3://" + l.Bucket
	if l.Prefix != "" {
		s += "/" + strings.TrimSuffix(l.Prefix, "/")
	}
	q := url.Values{}
	if l.Endpoint != "" {
		q.Set("endpoint", l.Endpoint)
	}
	if l.Region != "" {
		q.Set("region", l.Region)
	}
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// NewBackend opens the backend of a location (with retries).
func NewBackend(l Location) (*Retry, error) {
	var (
		be  Backend
		err error
	)
	switch l.Scheme {
	case "file":
		be, err = NewFile(l.Dir)
	case "s3":
		if err := CheckCredentials(); err != nil {
			return nil, err
		}
		be, err = NewS3(S3Config{Bucket: l.Bucket, Prefix: l.Prefix, Endpoint: l.Endpoint, Region: l.Region})
	default:
		err = fmt.Errorf("unknown remote scheme %q", l.Scheme)
	}
	if err != nil {
		return nil, err
	}
	return &Retry{Backend: be}, nil
}
