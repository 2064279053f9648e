import Testing
import TransferDaemon

/// `metrics_listen`'s addresses, which need no listener.
@Suite("Metrics listen address")
struct MetricsListenerTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464),
        ("localhost:0", "localhost", 0),
        ("[::1]:9464", "::1", 9464),
        ("0.0.0.0:65535", "0.0.0.0", 65535),
    ])
    func addressesThatParse(text: String, host: String, port: Int) {
        let address = MetricsListenAddress(text)
        #expect(address?.host == host)
        #expect(address?.port == port)
    }

    @Test(arguments: ["9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "::1:9464", "[::1]9464", "host:-1", "a b:1", "127.0.0.1:٣"])
    func addressesThatDoNot(text: String) {
        #expect(MetricsListenAddress(text) == nil)
    }
}
