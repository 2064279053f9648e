public import Foundation

/// Keeps credentials out of logs, `status` answers and error messages: a URL's user and password,
/// and the values of query parameters named like credentials (`access_token`, `code`, `jwt`,
/// `api_key`, `X-Amz-Signature`, …). Header values are never shown at all, only their names.
public enum Redaction {
    /// What a redacted query value reads as.
    public static let placeholder = "REDACTED"

    /// The URL without user or password, and with credential-like query values replaced.
    public static func url(_ url: URL) -> String {
        let query = url.query(percentEncoded: true)
        let secretQuery = query.map(hasSecretParameter) ?? false
        guard url.user != nil || url.password != nil || secretQuery,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else {
            return url.absoluteString
        }
        components.user = nil
        components.password = nil
        if secretQuery, let query {
            components.percentEncodedQuery = redactingParameters(query)
        }
        return components.string ?? "(URL hidden: it holds credentials)"
    }

    /// A URL accepted earlier, as `url(_:)` shows it; without parsing it when it has no user,
    /// password or secret query parameter to hide (the common case, as every listed job and
    /// every event shows its URL).
    public static func acceptedURL(_ text: String) -> String {
        guard !text.utf8.contains(UInt8(ascii: "@")) else { return URL(string: text).map(url) ?? text }
        // A query whose names are no credentials is shown as it is (what `url(_:)` would do).
        guard let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")) else { return text }
        let query = text[text.utf8.index(after: mark)...].prefix { $0 != "#" }
        guard hasSecretParameter(String(query)) else { return text }
        return URL(string: text).map(url) ?? text
    }

    /// `text` as a client sent it, for messages about a URL that may not even parse.
    public static func urlText(_ text: String) -> String {
        if let parsed = URL(string: text), parsed.scheme != nil, parsed.host != nil { return url(parsed) }
        guard let schemeEnd = text.range(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<schemeEnd.upperBound]) + String(rest[rest.index(after: at)...])
    }

    /// Whether a query parameter (or header) name reads like a credential.
    public static func isSecretName(_ name: String) -> Bool {
        let decoded = name.utf8.contains(UInt8(ascii: "%")) ? (name.removingPercentEncoding ?? name) : name
        let lowered = decoded.lowercased()
        if secretNames.contains(lowered) { return true }
        // Compared as bytes by a plain scan: every submit, status answer and event shows a URL, and
        // both Foundation's substring search and the standard library's `firstRange(of:)` (which
        // sets up a searcher each call) cost more than the rest of showing it: 5 % of a submit.
        var text = lowered
        return text.withUTF8 { bytes in secretWordBytes.contains { Self.contains(bytes, $0) } }
    }

    /// Names that are credentials only as a whole word: `code` is OAuth 2.0's authorization code
    /// (RFC 6749) and `device_code` and `user_code` the device grant's (RFC 8628), `sig` Azure's
    /// SAS signature, `ticket` a CAS service ticket, `otp` and `totp` one-time passwords.
    private static let secretNames: Set<String> = [
        "key", "sig", "pwd", "pass", "cookie", "code", "device_code", "user_code", "ticket", "otp", "totp",
    ]
    /// Parts of names that mark a credential wherever they appear: `token` covers OAuth's and OpenID
    /// Connect's `access_token`, `refresh_token`, `id_token` and RFC 8693's `subject_token`, and
    /// `X-Amz-Security-Token`; `signature` and `credential` the signed URLs of S3
    /// (`X-Amz-Signature`, `X-Amz-Credential`), Google Cloud Storage (`X-Goog-…`) and CloudFront
    /// (`Signature`); `assertion` RFC 7521's `assertion` and `client_assertion`; `verifier` PKCE's
    /// `code_verifier` and OAuth 1.0's `oauth_verifier`; `jwt` and `saml` tokens passed by name.
    private static let secretWords = [
        "token", "secret", "password", "passwd", "signature", "credential", "apikey", "api_key", "api-key", "auth", "session",
        "jwt", "assertion", "verifier", "saml", "hmac",
    ]

    private static let secretWordBytes = secretWords.map { Array($0.utf8) }

    /// Whether `word` occurs in `bytes`: names and words are a few bytes long.
    private static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ word: [UInt8]) -> Bool {
        guard let first = word.first, word.count <= bytes.count else { return word.isEmpty }
        for start in 0...(bytes.count - word.count) where bytes[start] == first {
            var matched = 1
            while matched < word.count, bytes[start + matched] == word[matched] { matched += 1 }
            if matched == word.count { return true }
        }
        return false
    }

    private static func hasSecretParameter(_ query: String) -> Bool {
        query.split(separator: "&").contains { isSecretName(String($0.prefix { $0 != "=" })) }
    }

    private static func redactingParameters(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            let name = parameter.prefix { $0 != "=" }
            guard name.count < parameter.count, isSecretName(String(name)) else { return String(parameter) }
            return name + "=" + placeholder
        }.joined(separator: "&")
    }
}
