import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real nginx, started by a test in its own directory: plain HTTP and TLS (HTTP/2) on loopback
/// ports of its own, with a certificate from a CA the test makes with openssl, a directory served
/// as is, `/private/` behind `auth_basic` (user `user`, password `secret`), and `/coded/` whose
/// answers say `Content-Encoding: gzip` (the misconfiguration that serves a .tar.gz so).
final class Nginx: @unchecked Sendable {
    // @unchecked: every property is set in init and only read afterwards.
    let directory: String
    let root: String
    let httpPort: Int
    let httpsPort: Int
    /// TLS that asks for a client certificate signed by the test CA (`clientCertificate`, `clientKey`).
    let mutualTLSPort: Int
    /// The CA that signed the server's certificate (for `localhost` and 127.0.0.1), PEM.
    let caFile: String
    let clientCertificate: String
    let clientKey: String
    private let peer: PeerProcess

    static let user = "user"
    static let password = "secret"

    /// Makes the CA, the certificate and the configuration, and starts nginx. Throws, saying what to
    /// install, when nginx or openssl is missing (`make test` and CI install them).
    init(in parent: String) async throws {
        for tool in ["/usr/sbin/nginx", "/usr/bin/openssl"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw DeadlineExceeded(description: "\(tool) is missing: apt-get install nginx-light openssl (make test installs them)")
        }
        directory = parent + "/nginx"
        root = directory + "/www"
        caFile = directory + "/ca.pem"
        clientCertificate = directory + "/client.pem"
        clientKey = directory + "/client.key"
        try FileManager.default.createDirectory(atPath: root + "/private", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/coded", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        try Self.makeCertificates(in: directory)
        let hash = try runProcess("/usr/bin/openssl", ["passwd", "-apr1", Self.password])
        try "\(Self.user):\(hash.stdout)".write(toFile: directory + "/htpasswd", atomically: true, encoding: .utf8)
        httpPort = try freePort()
        httpsPort = try freePort()
        mutualTLSPort = try freePort()
        let d = directory
        let configuration = """
            daemon off; master_process off; pid \(d)/nginx.pid; error_log \(d)/error.log;
            events {}
            http {
              log_format raw '$request_method $request_uri $status';
              access_log \(d)/access.log raw;
              client_body_temp_path \(d)/tmp; proxy_temp_path \(d)/tmp; fastcgi_temp_path \(d)/tmp;
              uwsgi_temp_path \(d)/tmp; scgi_temp_path \(d)/tmp;
              server {
                listen 127.0.0.1:\(httpPort);
                root \(root);
                location /private/ { auth_basic "transferd tests"; auth_basic_user_file \(d)/htpasswd; }
                location /coded/ { add_header Content-Encoding gzip; }
                location = /moved { return 302 "sub/../f%C3%BCr%20x.bin?b=%2F"; }
                location /dav/ { dav_methods PUT; create_full_put_path on; client_max_body_size 64m; }
                location /slow/ { limit_rate 2m; }
              }
              server {
                listen 127.0.0.1:\(httpsPort) ssl http2;
                listen 127.0.0.2:\(httpsPort) ssl http2;
                ssl_certificate \(d)/server.pem; ssl_certificate_key \(d)/server.key;
                root \(root);
                location /private/ { auth_basic "transferd tests"; auth_basic_user_file \(d)/htpasswd; }
              }
              server {
                listen 127.0.0.1:\(mutualTLSPort) ssl;
                ssl_certificate \(d)/server.pem; ssl_certificate_key \(d)/server.key;
                ssl_client_certificate \(d)/ca.pem; ssl_verify_client on;
                root \(root);
              }
            }
            """
        try configuration.write(toFile: d + "/nginx.conf", atomically: true, encoding: .utf8)
        peer = try await PeerProcess(
            "nginx", "/usr/sbin/nginx", ["-c", d + "/nginx.conf", "-p", d], ports: [httpPort, httpsPort, mutualTLSPort], seconds: 20,
            log: { (try? String(contentsOfFile: d + "/error.log", encoding: .utf8)) ?? "" })
    }

    /// Writes `bytes` at `path` below the served directory.
    func serve(_ bytes: [UInt8], at path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/" + path))
    }

    func url(_ path: String, tls: Bool = false, credentials: String? = nil) -> String {
        let login = credentials.map { $0 + "@" } ?? ""
        return tls ? "https://\(login)localhost:\(httpsPort)/\(path)" : "http://\(login)127.0.0.1:\(httpPort)/\(path)"
    }

    /// An https URL of the server that wants a client certificate.
    func mutualTLSURL(_ path: String) -> String { "https://localhost:\(mutualTLSPort)/\(path)" }

    /// The access log's lines so far.
    var accessLog: [String] {
        ((try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() { peer.stop() }

    private static func makeCertificates(in directory: String) throws {
        let d = directory
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.pem", "-days", "2",
             "-subj", "/CN=transferd test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr", "-subj", "/CN=localhost"],
            ["x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key", "-CAcreateserial",
             "-out", d + "/server.pem", "-days", "2", "-extfile", d + "/server.ext"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/client.key", "-out", d + "/client.csr", "-subj", "/CN=transferd test client"],
            ["x509", "-req", "-in", d + "/client.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key", "-CAcreateserial",
             "-out", d + "/client.pem", "-days", "2"],
        ]
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: d + "/server.ext", atomically: true, encoding: .utf8)
        for step in steps {
            let result = try runProcess("/usr/bin/openssl", step)
            guard result.status == 0 else { throw DeadlineExceeded(description: "openssl \(step.first ?? ""): \(result.stderr)") }
        }
    }
}

/// A loopback TCP port nothing listens on now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw DeadlineExceeded(description: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw DeadlineExceeded(description: "bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
func canConnect(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
