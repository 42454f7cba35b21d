import Foundation
import PushSystem
import PushTestSupport
import Testing

/// The names of this process's threads, as `/proc/self/task/*/comm` shows them.
func threadNames() throws -> [String] {
    let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
    return tasks.compactMap { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines)
    }
}

@Suite("PushSystem: every thread it starts carries a name in /proc", .testBodyThreads)
struct ThreadNameTests {
    @Test("a PosixThread, an event loop's thread and a worker pool's threads show the names they were given")
    func namesShowInProc() throws {
        let started = CompletionLatch()
        let release = CompletionLatch()
        let thread = try PosixThread.spawn(name: "name-test-one") {
            started.open()
            release.wait()
        }
        let loop = try EventLoop(name: "name-test-loop")
        let pool = try WorkerPool(threadCount: 2, queueCapacity: 4, name: "name-test-pool")
        defer {
            release.open()
            thread.join()
            loop.shutdown()
            pool.shutdown()
        }
        // pthread_setname_np runs first thing on each new thread: wait for each to be running.
        let loopRunning = CompletionLatch()
        loop.execute { loopRunning.open() }
        let poolRunning = CompletionLatch()
        #expect(pool.submit({ poolRunning.open() }, deliveringOn: loop) { _ in })
        #expect(started.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        #expect(loopRunning.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        #expect(poolRunning.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        let names = try threadNames()
        #expect(names.contains("name-test-one"))
        #expect(names.contains("name-test-loop"))
        #expect(names.contains("name-test-pool"))
    }

    @Test("a name longer than Linux keeps is cut to 15 bytes, never inside a character")
    func longNamesAreCut() throws {
        let started = CompletionLatch()
        let release = CompletionLatch()
        let thread = try PosixThread.spawn(name: "name-test-ééééééé") {
            started.open()
            release.wait()
        }
        defer {
            release.open()
            thread.join()
        }
        started.wait()
        let names = try threadNames()
        // "name-test-" is 10 bytes; two "é" (4 bytes) fit, a third would make 16.
        #expect(names.contains("name-test-éé"))
    }
}
