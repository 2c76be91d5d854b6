import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Six auth threads hammer a synchronized TokenSigner.sign() held for 20-100 us of CPU work (field
 * report 000, Provider.getService). Waiters are BLOCKED in many dumps; the holder shows up only in
 * some, and then mostly BLOCKED yet "- locked" -- the pattern behind "run jstack ten times to see
 * the holder".
 */
public class ShortHolds {
    public static void main(String[] args) throws Exception {
        long deadline = Scenario.deadline(args);
        TokenSigner signer = new TokenSigner();
        AuthService auth = new AuthService(signer);
        List<Thread> workers = Scenario.startDaemons("auth-worker-", 6, auth::serve);
        // Waiters are BLOCKED only briefly: sample every 1 ms to see three of them at once.
        Scenario.awaitState(workers, Thread.State.BLOCKED, 3, 30_000, 1);
        Scenario.readyThenRunUntil(deadline);
    }
}

class AuthService {
    private final TokenSigner signer;

    AuthService(TokenSigner signer) {
        this.signer = signer;
    }

    void serve() {
        long user = Thread.currentThread().getId();
        while (true) {
            login(user++);
        }
    }

    long login(long user) {
        long digest = PasswordHasher.hash(user);
        long token = signer.sign(digest);
        // Think time between requests keeps CPU use bounded on small machines.
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(20_000, 100_000));
        return token;
    }
}

class PasswordHasher {
    static long hash(long user) {
        long end = System.nanoTime() + 15_000;
        long h = user;
        while (System.nanoTime() < end) {
            h = h * 6364136223846793005L + 1442695040888963407L;
        }
        return h;
    }
}

class TokenSigner {
    // Sized so one copy takes roughly 20-80 us on a current x86 core.
    private static final int MIN_BYTES = 384 << 10;
    private static final int MAX_BYTES = 1408 << 10;
    private final byte[] blindingIn = new byte[MAX_BYTES];
    private final byte[] blindingOut = new byte[MAX_BYTES];
    private long blindingState = 1;
    private int uses;

    synchronized long sign(long digest) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long blinded = blind(digest, rnd.nextInt(MIN_BYTES, MAX_BYTES + 1));
        if (++uses % 8 == 0) {
            refreshBlinding(rnd.nextLong(10_000, 20_001));
        }
        return blinded;
    }

    private long blind(long digest, int len) {
        // A bulk copy has no safepoint poll inside, so a dump cannot stop the holder here:
        // like the field incident, the holder is usually missing from the dump or shows up
        // BLOCKED yet "- locked" (a waiter that took the lock during the safepoint).
        System.arraycopy(blindingIn, 0, blindingOut, 0, len);
        blindingIn[len - 1] = (byte) digest;
        return digest ^ blindingOut[len - 1] ^ blindingState;
    }

    private void refreshBlinding(long nanos) {
        // Occasional CPU-bound loop with safepoint polls: only here is a RUNNABLE holder seen.
        long end = System.nanoTime() + nanos;
        long x = blindingState;
        while (System.nanoTime() < end) {
            x = Long.rotateLeft(x * 0x9E3779B97F4A7C15L, 17) ^ end;
        }
        blindingState = x | 1;
    }
}
