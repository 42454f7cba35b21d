import Foundation
import PushCrypto
import PushMarmot
import PushNostr
import PushSystem
import PushTestSupport
import PushWebSocket
import Synchronization
import Testing

@testable import MarmotIngress

/// A value several threads read and change (a class, so that escaping closures can share it).
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value { mutex.withLock { $0 } }

    @discardableResult
    func update<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}

/// Relay clients as the Marmot mode runs them (`NostrRelayClient` over `WebSocketClientConnection`,
/// every relay on one event loop), on a loop of the test's own so that the loop thread's CPU time
/// can be read apart from the rest of the test process.
final class RelayClientHarness: @unchecked Sendable {
    let loop: EventLoop
    /// The loop thread's id, for /proc/self/task/<id>/stat.
    let loopThreadID: String
    private let recorded = Shared(Recorded())
    private let clients = LoopOwned()

    struct Recorded {
        var giftWraps: [Int] = []
        var states: [Int: [NostrRelayConnectionState]] = [:]
        var ended: [Int: [String]] = [:]
    }

    // @unchecked Sendable: filled and read on the loop thread only.
    private final class LoopOwned: @unchecked Sendable {
        var all: [NostrRelayClient] = []
    }

    init(relays: [String]) throws {
        loop = try EventLoop()
        let threadID = Shared<String?>(nil)
        loop.execute {
            let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
            threadID.update { $0 = link?.split(separator: "/").last.map(String.init) ?? "" }
        }
        _ = eventually(within: 10, every: 0.01) { threadID.value != nil }
        loopThreadID = threadID.value ?? ""
        let urls = relays
        for (index, url) in relays.enumerated() {
            loop.execute { [self] in
                var configuration = NostrRelaySessionConfiguration(
                    relayURL: url, serverKey: MarmotFixture.server, inboxRelayURLs: urls)
                configuration.initialBackoff = .milliseconds(200)
                configuration.maximumBackoff = .seconds(2)
                let client = NostrRelayClient(
                    url: WebSocketURL(url)!, configuration: configuration, loop: loop, tlsContext: nil, proxy: nil,
                    unixTime: { Int64(Date().timeIntervalSince1970) }, callbacks: callbacks(index))
                clients.all.append(client)
                client.start()
            }
        }
    }

    func stop() {
        loop.execute { [clients] in clients.all.forEach { $0.stop() } }
        loop.shutdown()
    }

    private func callbacks(_ index: Int) -> NostrRelayClient.Callbacks {
        NostrRelayClient.Callbacks(
            giftWrap: { [recorded] _ in recorded.update { $0.giftWraps.append(index) } },
            malformedGiftWrap: {},
            stateChanged: { [recorded] state in recorded.update { $0.states[index, default: []].append(state) } },
            report: { _ in },
            connectionEnded: { [recorded] reason in recorded.update { $0.ended[index, default: []].append(reason) } })
    }

    func state(_ index: Int) -> NostrRelayConnectionState? { recorded.value.states[index]?.last }
    func reached(_ index: Int, _ state: NostrRelayConnectionState) -> Bool {
        recorded.value.states[index]?.contains(state) ?? false
    }
    func giftWraps(from index: Int) -> Int { recorded.value.giftWraps.filter { $0 == index }.count }
    func endings(_ index: Int) -> [String] { recorded.value.ended[index] ?? [] }

    /// User plus system CPU time of the loop thread, in seconds (/proc, clock ticks).
    var loopCPUSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(loopThreadID)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return .nan }
        let fields = text[text.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? .nan) + (Double(fields[12]) ?? .nan)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The test process's resident set, in bytes (/proc/self/statm).
    static var residentBytes: Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return .nan }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Double(fields[1]) ?? .nan : .nan) * Double(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// A relay that behaves: `EOSE` for every `REQ`, `OK` true for every `EVENT`, and the texts the
/// test hands it, sent within a few milliseconds.
final class HonestScriptedRelay: Sendable {
    let server: ScriptedWebSocketServer
    private let outbox: Shared<[String]>

    init() throws {
        let outbox = Shared<[String]>([])
        self.outbox = outbox
        server = try ScriptedWebSocketServer { peer in
            while true {
                if let text = try peer.readText(timeout: .milliseconds(5)) {
                    if text.hasPrefix(#"["REQ","#) {
                        try peer.sendText(#"["EOSE","marmot-push"]"#)
                    } else if text.hasPrefix(#"["EVENT",{"id":""#) {
                        let id = text.dropFirst(#"["EVENT",{"id":""#.count).prefix(64)
                        try peer.sendText(#"["OK",""# + id + #"",true,""]"#)
                    }
                }
                for text in outbox.update({ texts in
                    defer { texts = [] }; return texts
                }) {
                    try peer.sendText(text)
                }
            }
        }
    }

    var url: String { server.url() }

    func send(_ text: String) { outbox.update { $0.append(text) } }

    /// A gift wrap to the server key, as the relay delivers it on the gateway's subscription.
    static func giftWrapMessage() -> String {
        let author = MarmotFixture.author()
        let wrap = MarmotTestEncoder.giftWrap(
            MarmotTestEncoder.rumor(chunks: [MarmotFixture.apnsChunk()], author: author), author: author,
            server: MarmotFixture.server.publicKey)
        return #"["EVENT","marmot-push","# + String(decoding: wrap.json, as: UTF8.self) + "]"
    }
}

/// What a hostile relay sends on each connection (docs/protocol.md §13's frame rules), and the
/// close code the client must end it with.
struct FrameAttack: Sendable, CustomTestStringConvertible {
    let name: String
    let closeCode: UInt16
    let bytes: @Sendable () -> [UInt8]

    var testDescription: String { name }

    static func frame(_ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true, masked: Bool = false) -> [UInt8] {
        ScriptedWebSocketPeer.frame(opcode: opcode, payload: payload, fin: fin, masked: masked)
    }

    static let all: [FrameAttack] = [
        FrameAttack(name: "a 200 KB fragment, then 30,000 empty continuation frames", closeCode: 1009) {
            frame(0x1, [UInt8](repeating: 0x61, count: 200_000), fin: false)
                + (0..<30_000).flatMap { _ in frame(0x0, fin: false) }
        },
        FrameAttack(name: "a 250 KB fragment, then one-byte continuation frames past 262,144 bytes", closeCode: 1009) {
            frame(0x1, [UInt8](repeating: 0x61, count: 250_000), fin: false)
                + (0..<12_200).flatMap { _ in frame(0x0, [0x61], fin: false) }
        },
        FrameAttack(name: "a message growing past 262,144 bytes in 64 KiB fragments", closeCode: 1009) {
            (0..<5).flatMap { index in
                frame(index == 0 ? 0x1 : 0x0, [UInt8](repeating: 0x61, count: 65_536), fin: false)
            }
        },
        FrameAttack(name: "a masked text frame", closeCode: 1002) {
            frame(0x1, Array(#"["NOTICE","x"]"#.utf8), masked: true)
        },
        FrameAttack(name: "a fragmented binary message", closeCode: 1003) {
            (0..<4).flatMap { index in
                frame(index == 0 ? 0x2 : 0x0, [UInt8](repeating: 7, count: 60_000), fin: index == 3)
            }
        },
        FrameAttack(name: "a text message that is not UTF-8", closeCode: 1007) {
            frame(0x1, Array("[\"NOTICE\",\"".utf8), fin: false) + frame(0x0, [0xC3, 0x28, 0x22, 0x5D])
        },
    ]
}

@Suite("Hostile relays against the relay client's I/O path (docs/protocol.md §13)", .serialized, .testBodyThreads)
struct HostileRelayTests {
    @Test(
        "a frame attack closes the connection with its code, costs the loop little CPU, and an honest relay's message on the same loop arrives within 1 s",
        arguments: FrameAttack.all)
    func frameAttack(attack: FrameAttack) throws {
        let attacksSent = Shared(0)
        let hostile = try ScriptedWebSocketServer { peer in
            try peer.send(attack.bytes())
            attacksSent.update { $0 += 1 }
            while try peer.readFrame(timeout: .seconds(30)) != nil {}
        }
        let honest = try HonestScriptedRelay()
        let harness = try RelayClientHarness(relays: [honest.url, hostile.url()])
        // The hostile relay first: a loop still busy with its bytes could not stop.
        defer {
            hostile.stop()
            harness.stop()
        }
        #expect(eventually(within: 20, every: 0.01) { harness.state(0) == .subscribed })
        let cpuAtStart = harness.loopCPUSeconds
        #expect(eventually(within: 20, every: 0.001) { attacksSent.value >= 1 })
        // The hostile relay's bytes are in flight: the honest relay's message must not wait for them.
        let sent = Date()
        honest.send(HonestScriptedRelay.giftWrapMessage())
        let arrived = eventually(within: 10, every: 0.005) { harness.giftWraps(from: 0) == 1 }
        let latency = Date().timeIntervalSince(sent)
        #expect(arrived && latency < 1, "the honest relay's message took \(latency) s")
        #expect(
            eventually(within: 20) { harness.endings(1).contains("protocol violation (\(attack.closeCode))") },
            "\(harness.endings(1))")
        // The client reconnects with backoff and the attack repeats; three of them stay cheap.
        #expect(eventually(within: 20, every: 0.01) { attacksSent.value >= 3 })
        let cpu = harness.loopCPUSeconds - cpuAtStart
        // Instrumented code under AddressSanitizer runs several times slower: CPU time is no measure
        // there, as the resident set is not; every other expectation still holds.
        if !AddressSanitizerRun.isActive {
            #expect(cpu < 1, "the loop thread used \(cpu) s of CPU")
        }
    }

    @Test(
        "a relay that floods pings and never reads: memory stays bounded and an honest relay's message arrives within 1 s"
    )
    func pingFlood() throws {
        let floodBytes = Shared(0)
        let hostile = try ScriptedWebSocketServer { peer in
            let chunk = (0..<1024).flatMap { _ in
                ScriptedWebSocketPeer.frame(opcode: 0x9, payload: [UInt8](repeating: 0x70, count: 125))
            }
            while true {
                try peer.send(chunk)
                floodBytes.update { $0 += chunk.count }
            }
        }
        let honest = try HonestScriptedRelay()
        let harness = try RelayClientHarness(relays: [honest.url, hostile.url()])
        // The hostile relay first: a loop still busy with its bytes could not stop.
        defer {
            hostile.stop()
            harness.stop()
        }
        #expect(eventually(within: 20, every: 0.01) { harness.state(0) == .subscribed })
        #expect(eventually(within: 20, every: 0.01) { floodBytes.value >= 20_000_000 })
        let residentAtStart = RelayClientHarness.residentBytes
        let sent = Date()
        honest.send(HonestScriptedRelay.giftWrapMessage())
        let arrived = eventually(within: 10, every: 0.005) { harness.giftWraps(from: 0) == 1 }
        let latency = Date().timeIntervalSince(sent)
        #expect(arrived && latency < 1, "the honest relay's message took \(latency) s")
        // 120 MB of pings more: before the fix each was answered into an unbounded buffer.
        #expect(eventually(within: 120, every: 0.05) { floodBytes.value >= 140_000_000 })
        // Under AddressSanitizer the resident set is no measure (shadow memory, quarantine of freed
        // blocks); every other expectation still holds there.
        let growth = RelayClientHarness.residentBytes - residentAtStart
        if !AddressSanitizerRun.isActive {
            #expect(growth < 48 * 1_048_576, "the resident set grew by \(Int(growth)) bytes")
        }
        #expect(harness.endings(1).isEmpty, "\(harness.endings(1))")
    }

    @Test(
        "a relay that floods NOTICE messages as fast as it can: an honest relay's message on the same loop arrives within 1 s"
    )
    func messageFlood() throws {
        let floodBytes = Shared(0)
        let hostile = try ScriptedWebSocketServer { peer in
            let chunk = (0..<1024).flatMap { index in
                ScriptedWebSocketPeer.frame(opcode: 0x1, payload: Array(#"["NOTICE","flood \#(index)"]"#.utf8))
            }
            while true {
                try peer.send(chunk)
                floodBytes.update { $0 += chunk.count }
            }
        }
        let honest = try HonestScriptedRelay()
        let harness = try RelayClientHarness(relays: [honest.url, hostile.url()])
        defer {
            hostile.stop()
            harness.stop()
        }
        #expect(eventually(within: 20, every: 0.01) { harness.state(0) == .subscribed })
        #expect(eventually(within: 20, every: 0.01) { floodBytes.value >= 5_000_000 })
        let sent = Date()
        honest.send(HonestScriptedRelay.giftWrapMessage())
        let arrived = eventually(within: 10, every: 0.005) { harness.giftWraps(from: 0) == 1 }
        let latency = Date().timeIntervalSince(sent)
        #expect(arrived && latency < 1, "the honest relay's message took \(latency) s")
        #expect(harness.endings(1).isEmpty, "\(harness.endings(1))")
    }

    @Test(
        "a relay that floods 20,000 AUTH challenges gets one answer per 10 s, costs the loop little CPU, and an honest relay's message arrives within 1 s"
    )
    func authenticationFlood() throws {
        let floodSent = Shared(false)
        let answers = Shared(0)
        let hostile = try ScriptedWebSocketServer { peer in
            var flood: [UInt8] = []
            for index in 0..<20_000 {
                flood += ScriptedWebSocketPeer.frame(
                    opcode: 0x1, payload: Array(#"["AUTH","challenge-\#(index)"]"#.utf8))
            }
            // The EOSE after the flood shows when the client has worked through it.
            flood += ScriptedWebSocketPeer.frame(opcode: 0x1, payload: Array(#"["EOSE","marmot-push"]"#.utf8))
            try peer.send(flood)
            floodSent.update { $0 = true }
            while let text = try peer.readText(timeout: .seconds(60)) {
                if text.hasPrefix(#"["AUTH","#) { answers.update { $0 += 1 } }
            }
        }
        let honest = try HonestScriptedRelay()
        let harness = try RelayClientHarness(relays: [honest.url, hostile.url()])
        // The hostile relay first: a loop still busy with its bytes could not stop.
        defer {
            hostile.stop()
            harness.stop()
        }
        #expect(eventually(within: 20, every: 0.01) { harness.state(0) == .subscribed })
        let cpuAtStart = harness.loopCPUSeconds
        #expect(eventually(within: 20, every: 0.001) { floodSent.value })
        let sent = Date()
        honest.send(HonestScriptedRelay.giftWrapMessage())
        let arrived = eventually(within: 30, every: 0.005) { harness.giftWraps(from: 0) == 1 }
        let latency = Date().timeIntervalSince(sent)
        #expect(arrived && latency < 1, "the honest relay's message took \(latency) s")
        #expect(eventually(within: 120, every: 0.05) { harness.reached(1, .subscribed) })
        let cpu = harness.loopCPUSeconds - cpuAtStart
        if !AddressSanitizerRun.isActive {
            #expect(cpu < 1, "the loop thread used \(cpu) s of CPU for 20,000 challenges")
        }
        // The first challenge is answered; the others wait 10 s for the newest one (a second answer
        // only when the machine's load made the test itself that slow).
        #expect(eventually(within: 5) { answers.value >= 1 })
        #expect(answers.value <= 2, "\(answers.value) AUTH answers")
    }

    @Test("a relay that does not read: more than 1 MiB of unsent output ends the connection")
    func unreadOutput() throws {
        let relay = try ScriptedWebSocketServer { peer in peer.waitWithoutReading() }
        defer { relay.stop() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let events = Shared<[String]>([])
        let connection = LoopBound<WebSocketClientConnection?>(nil, on: loop)
        loop.execute {
            let opened = WebSocketClientConnection(
                url: WebSocketURL(relay.url())!, loop: loop, tlsContext: nil, proxy: nil
            ) { event in
                switch event {
                case .opened: events.update { $0.append("opened") }
                case .ended(let reason): events.update { $0.append(reason) }
                case .message, .pong: break
                }
            }
            connection.value = opened
            opened.connect()
        }
        #expect(eventually(within: 10, every: 0.01) { events.value == ["opened"] })
        // 300 × 64 KiB is far more than the kernel's socket buffers take.
        let text = String(repeating: "x", count: 65_536)
        loop.execute {
            guard let opened = connection.value else { return }
            for _ in 0..<300 { opened.send(text: text) }
        }
        #expect(
            eventually(within: 20, every: 0.01) {
                events.value == ["opened", "the relay does not read (over 1 MiB unsent)"]
            }, "\(events.value)")
        loop.execute { connection.value = nil }
    }
}
