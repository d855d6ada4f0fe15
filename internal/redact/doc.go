// Package redact finds secrets in text and replaces each by a marker,
// "[REDACTED:kind]", before session messages (prompts, replies, tool
// output) leave the machine with a remote push.
//
// [String] and [Bytes] redact plain text; [JSON] redacts inside every
// string of a JSON document (or a stream of them, as in JSON Lines) and
// keeps it valid. Each returns how many secrets it replaced. Bytes that
// are not part of a secret are kept exactly, invalid UTF-8 included, and
// the result of a redaction has nothing left to redact: redacting it
// again changes nothing. The work is linear in the input: one pass finds
// the literals the rules start from (a token's prefix, a word such as
// "token" or "://"), a rule's expression (Go's regexp, RE2) runs only on
// a bounded window there, and the entropy scan looks at each byte a
// bounded number of times; BenchmarkRedact runs at about 40 MB/s.
//
// # What is caught
//
// Token formats, by their prefix and shape, at any place in the text:
// AWS access key ids (AKIA…), GitHub tokens (ghp_, gho_, ghu_, ghs_,
// ghr_, github_pat_), GitLab tokens (glpat- and kin), OpenAI keys
// (sk-, sk-proj-), Anthropic keys (sk-ant-), Slack tokens (xoxb- and
// kin, xapp-) and webhook URLs, Stripe secret and restricted keys and
// webhook secrets, Google API keys (AIza…), OAuth client secrets
// (GOCSPX-) and access tokens (ya29.), JWTs, npm, PyPI, Hugging Face,
// SendGrid and DigitalOcean tokens, Azure storage account keys and SAS
// signatures, and PEM private keys — the whole block, or up to where it
// was cut off when the END line is missing — with the private_key of a
// Google service account file.
//
// Secrets by where they stand, redacting the value only:
//
//   - a setting whose name ends in password, passwd, passphrase, secret,
//     secret_key, api_key, access_key, private_key, token, credential(s),
//     auth_key, session_key or connection_string, in any case and with
//     any prefix, or in a separate pass or pwd (DB_PASSWORD=…,
//     "api_key": "…", secret: …, --token …, x-api-key: …, DB_PASS=…);
//     in [JSON], a string under such a key;
//   - the password in a URL (scheme://user:password@host);
//   - Authorization headers (Bearer, Basic, token) and "Bearer …";
//   - curl -u user:password and mysql -ppassword.
//
// Any other token of 20 to 1024 characters of the base64 or base64url
// alphabet that looks random: both cases and digits, high Shannon
// entropy for its length, few runs of lower-case letters (as words,
// identifiers and paths have), and not base64 of plain text. Hex is
// taken only when it is 32 digits or more and not of a digest's length.
//
// # What is left alone
//
// Hex digests of 32, 40, 56, 64, 96 or 128 digits (git object ids,
// ckpt's sha256 ids, checksums), UUIDs, paths, identifiers and words,
// go.sum and Subresource Integrity hashes (h1:, sha512-), SSH public
// keys, base64 of text (of a number, a date), placeholders ($TOKEN,
// ${{ secrets.X }}, <api-key>, ****), and code or a path on the right of
// a secret name (getenv("TOKEN"), tokens[0], cfg.Password,
// password: string, PWD=/home/alice).
//
// # Limits
//
// Redaction is a safety net, not a guarantee:
//
//   - A secret in no known format and without a telling name is caught
//     only by its entropy: a short one (under 20 characters), one of a
//     single case or without digits (a lower-case hex or base36 key, a
//     passphrase of words) is missed, and so is a hex key of a digest's
//     length — `openssl rand -hex 32` makes one — unless a name such as
//     SECRET_KEY= stands before it.
//   - A password in prose ("the password is hunter2") is missed: only
//     "name=value" and "name: value" forms are understood.
//   - Random ids that are not secrets (a base62 ksuid, a nonce, a long
//     base64 hash with no known prefix) are redacted: they cannot be told
//     from keys.
//   - A blob of base64 longer than 1024 characters (an image, a file) is
//     kept: it is data, and a secret inside it is not looked for.
//   - A token format is matched on at most 512 bytes from its prefix
//     (8 KiB for a JWT): the rest of a longer one is left to the entropy
//     scan.
//   - A value is at most 512 bytes; a setting's name at most 64.
//   - A secret split across lines, escaped (\u0041…) in plain text, or
//     encoded in a way other than the above is not recognized.
package redact
