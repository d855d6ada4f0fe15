package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config locates a bucket.
type S3Config struct {
	Bucket string
	Prefix string // key prefix, "" or ending in '/'
	// Endpoint is the server's URL ("" for AWS: s3.<region>.amazonaws.com).
	Endpoint string
	Region   string
	// PathStyle forces path-style requests (the default for a custom
	// endpoint, as most S3-compatible servers want).
	PathStyle bool
	// Transport, if set, carries the requests (tests).
	Transport http.RoundTripper
	// MaxRetries is the client's attempts per request (0: 1; [Retry]
	// retries).
	MaxRetries int
}

type s3Backend struct {
	cfg    S3Config
	client *minio.Client
	name   string
}

// AWS environment variables and files the credential chain reads, in order:
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), then the
// shared credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials,
// profile AWS_PROFILE), then, where the environment says it runs on AWS with
// a role (ECS, EKS web identity), the instance's role.
func credentialChain() *credentials.Credentials {
	providers := []credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
	}
	if os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "" || os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "" ||
		os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "" || os.Getenv("CKPT_S3_INSTANCE_ROLE") != "" {
		providers = append(providers, &credentials.IAM{})
	}
	return credentials.NewChainCredentials(providers)
}

// Region returns the region from the AWS environment: AWS_REGION,
// AWS_DEFAULT_REGION, then the profile's region in ~/.aws/config.
func Region() string {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	path := os.Getenv("AWS_CONFIG_FILE")
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		path = filepath.Join(home, ".aws", "config")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	profile := os.Getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	want := "[default]"
	if profile != "default" {
		want = "[profile " + profile + "]"
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == want
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok && strings.TrimSpace(k) == "region" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Endpoint returns the endpoint from the AWS environment
// (AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL), or "".
func Endpoint() string {
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// NewS3 returns the backend of a bucket. It does not contact the server.
func NewS3(cfg S3Config) (Backend, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("no bucket named")
	}
	if cfg.Region == "" {
		cfg.Region = Region()
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = Endpoint()
	}
	host, secure := "s3.amazonaws.com", true
	lookup := minio.BucketLookupAuto
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("invalid S3 endpoint %q: want a URL like https://s3.example.com or http://127.0.0.1:7070", cfg.Endpoint)
		}
		if u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("invalid S3 endpoint %q: it has a path; put the bucket and prefix in the remote's URL (s3://bucket/prefix)", cfg.Endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
		lookup = minio.BucketLookupPath
	} else if cfg.Region != "" {
		host = "s3." + cfg.Region + ".amazonaws.com"
	}
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	// One attempt per request: Retry does the retrying, with one policy
	// for every backend.
	retries := cfg.MaxRetries
	if retries <= 0 {
		retries = 1
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentialChain(),
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    cfg.Transport,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", host, err)
	}
	name := "s3://" + cfg.Bucket
	if cfg.Prefix != "" {
		name += "/" + strings.TrimSuffix(cfg.Prefix, "/")
	}
	return &s3Backend{cfg: cfg, client: client, name: name}, nil
}

func (b *s3Backend) String() string { return b.name }

// CheckCredentials reports a missing credential before any request.
func CheckCredentials() error {
	v, err := credentialChain().GetWithContext(nil)
	if err != nil || v.AccessKeyID == "" || v.SignerType == credentials.SignatureAnonymous {
		return &NoCredentialsError{}
	}
	return nil
}

// NoCredentialsError: the AWS credential chain found nothing.
type NoCredentialsError struct{}

func (e *NoCredentialsError) Error() string { return "no S3 credentials found" }

// Hint says where credentials come from.
func (e *NoCredentialsError) Hint() string {
	return "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put them in ~/.aws/credentials " +
		"(profile from AWS_PROFILE); on AWS with a role, set CKPT_S3_INSTANCE_ROLE=1"
}

func (b *s3Backend) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey" || (resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket"):
		err = ErrNotExist
	case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" ||
		resp.StatusCode == http.StatusConflict && resp.Code == "ConditionalRequestConflict":
		err = ErrPrecondition
	case resp.Code == "NoSuchBucket":
		err = &BucketError{Bucket: b.cfg.Bucket, Err: err}
	case resp.Code == "AuthorizationHeaderMalformed" || resp.Code == "InvalidRegion" || resp.Code == "IllegalLocationConstraintException":
		err = &RegionError{Region: b.cfg.Region, Err: err}
	case resp.Code == "InvalidAccessKeyId" || resp.Code == "SignatureDoesNotMatch" || resp.Code == "AccessDenied" ||
		resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		err = &AccessError{Err: err}
	case resp.StatusCode == http.StatusBadRequest:
		// Without an error body (a HEAD, or a server that says no more),
		// a 400 is most often a signature made for another region.
		err = &RegionError{Region: b.cfg.Region, Err: err}
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		err = &RequestError{Status: resp.StatusCode, Err: err}
	}
	return &OpError{Op: op, Remote: b.name, Key: key, Err: err}
}

// BucketError: the bucket does not exist.
type BucketError struct {
	Bucket string
	Err    error
}

func (e *BucketError) Error() string { return fmt.Sprintf("bucket %q does not exist", e.Bucket) }
func (e *BucketError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *BucketError) Hint() string {
	return "create the bucket first (ckpt does not create buckets), or check the bucket name and the endpoint (AWS_ENDPOINT_URL)"
}

// RegionError: the server refused the region.
type RegionError struct {
	Region string
	Err    error
}

func (e *RegionError) Error() string {
	region := e.Region
	if region == "" {
		region = "us-east-1 (the default)"
	} else {
		region = strconv.Quote(region)
	}
	return fmt.Sprintf("the server refused the request (%v): it was signed for region %s", e.Err, region)
}
func (e *RegionError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *RegionError) Hint() string {
	return "set the bucket's region with AWS_REGION or ?region= in the remote's URL (a wrong endpoint gives this too: check AWS_ENDPOINT_URL or ?endpoint=)"
}

// RequestError: the server refused a request in a way a retry does not
// change (a 4xx other than 408 and 429).
type RequestError struct {
	Status int
	Err    error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// AccessError: the server refused the credentials.
type AccessError struct{ Err error }

func (e *AccessError) Error() string { return "the server refused access: " + e.Err.Error() }
func (e *AccessError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *AccessError) Hint() string {
	return "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the AWS_PROFILE in use) and the bucket's policy"
}

func (b *s3Backend) key(k string) string { return b.cfg.Prefix + k }

func (b *s3Backend) Get(ctx context.Context, key string) ([]byte, string, error) {
	obj, err := b.client.GetObject(ctx, b.cfg.Bucket, b.key(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, "", b.wrap("get", key, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, "", b.wrap("get", key, err)
	}
	data, err := readAllLimit(obj, 1<<31)
	if err != nil {
		return nil, "", b.wrap("get", key, err)
	}
	if int64(len(data)) != st.Size {
		return nil, "", b.wrap("get", key, fmt.Errorf("short read: %d of %d bytes", len(data), st.Size))
	}
	return data, strings.Trim(st.ETag, `"`), nil
}

func (b *s3Backend) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 || length <= 0 || length > maxRange {
		return nil, b.wrap("get", key, fmt.Errorf("%w: %d+%d", ErrShort, offset, length))
	}
	var opts minio.GetObjectOptions
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, b.wrap("get", key, err)
	}
	obj, err := b.client.GetObject(ctx, b.cfg.Bucket, b.key(key), opts)
	if err != nil {
		return nil, b.wrap("get", key, err)
	}
	defer obj.Close()
	data, err := readAllLimit(obj, length)
	if err != nil && minio.ToErrorResponse(err).StatusCode != http.StatusRequestedRangeNotSatisfiable {
		return nil, b.wrap("get", key, err)
	}
	if err != nil || int64(len(data)) != length {
		// A connection cut short, or an object shorter than the range:
		// only the second is final.
		if st, serr := b.client.StatObject(ctx, b.cfg.Bucket, b.key(key), minio.StatObjectOptions{}); serr == nil && offset+length > st.Size {
			return nil, b.wrap("get", key, fmt.Errorf("%w: %d+%d of %d bytes", ErrShort, offset, length, st.Size))
		}
		return nil, b.wrap("get", key, fmt.Errorf("short read: %d of %d bytes", len(data), length))
	}
	return data, nil
}

func (b *s3Backend) Put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true, SendContentMd5: true}
	switch {
	case cond.IfNoneMatch:
		opts.SetMatchETagExcept("*")
	case cond.IfMatch != "":
		opts.SetMatchETag(cond.IfMatch)
	}
	info, err := b.client.PutObject(ctx, b.cfg.Bucket, b.key(key), bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return "", b.wrap("put", key, err)
	}
	return strings.Trim(info.ETag, `"`), nil
}

func (b *s3Backend) List(ctx context.Context, prefix string) ([]Entry, error) {
	var out []Entry
	for obj := range b.client.ListObjects(ctx, b.cfg.Bucket, minio.ListObjectsOptions{Prefix: b.key(prefix), Recursive: true}) {
		if obj.Err != nil {
			return nil, b.wrap("list", prefix, obj.Err)
		}
		out = append(out, Entry{Key: strings.TrimPrefix(obj.Key, b.cfg.Prefix), Size: obj.Size, ModTime: obj.LastModified})
	}
	return out, nil
}

func (b *s3Backend) Delete(ctx context.Context, key string) error {
	err := b.client.RemoveObject(ctx, b.cfg.Bucket, b.key(key), minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return b.wrap("delete", key, err)
	}
	return nil
}
