import Foundation
import Testing
@testable import TransferCore

@Suite("Redaction")
struct RedactionTests {
    @Test func userInformationAndCredentialLikeQueryValuesAreHidden() throws {
        let url = try #require(URL(string: "https://user:pa55@example.com:8443/f.iso?access_token=abc&X-Amz-Signature=def&api_key=ghi&page=2#frag"))
        let shown = Redaction.url(url)
        #expect(shown == "https://example.com:8443/f.iso?access_token=REDACTED&X-Amz-Signature=REDACTED&api_key=REDACTED&page=2#frag")
        let plain = try #require(URL(string: "https://example.com/f.iso?page=2&flag"))
        #expect(Redaction.url(plain) == "https://example.com/f.iso?page=2&flag", "nothing to hide: unchanged")
    }

    @Test func unparsableTextLosesItsUserInformation() {
        #expect(Redaction.urlText("http://user:pa55@exa mple.com/x") == "http://exa mple.com/x")
        #expect(Redaction.urlText("not a url") == "not a url")
    }

    @Test func credentialNamesAreRecognised() {
        for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "PRIVATE-TOKEN", "X-Auth-Token", "client_secret"] {
            #expect(Redaction.isSecretName(name), "\(name)")
        }
        for name in ["Accept", "User-Agent", "X-Request-Id", "page"] {
            #expect(!Redaction.isSecretName(name), "\(name)")
        }
    }
}

@Suite("Redaction of OAuth, OpenID Connect, JWT and signed-URL credentials")
struct CredentialSchemeRedactionTests {
    @Test func theCredentialNamesOfTheCommonSchemesAreHidden() throws {
        let names = [
            "code", "jwt", "id_token", "access_token", "refresh_token", "subject_token", "client_secret", "assertion",
            "client_assertion", "code_verifier", "device_code", "user_code", "oauth_verifier", "SAMLResponse", "ticket",
            "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature", "X-Goog-Credential",
            "Signature", "sig", "password", "passwd", "api_key", "apikey", "key", "hmac", "otp",
        ]
        for name in names {
            let url = try #require(URL(string: "https://example.com/f?\(name)=s3cr3t&page=2"))
            #expect(Redaction.url(url) == "https://example.com/f?\(name)=REDACTED&page=2", "\(name)")
            #expect(Redaction.acceptedURL(url.absoluteString) == "https://example.com/f?\(name)=REDACTED&page=2", "\(name)")
        }
    }

    @Test func parametersThatAreNoSecretsStay() throws {
        for name in ["state", "page", "client_id", "code_challenge", "Expires", "Key-Pair-Id", "se", "sp", "redirect_uri"] {
            let url = try #require(URL(string: "https://example.com/f?\(name)=visible"))
            #expect(Redaction.url(url) == url.absoluteString, "\(name)")
        }
    }
}
