package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Ports fixed before their server binds (a standby RM binds its ports only once it is active, and
 * a restarted one binds them again), kept from every other minicluster of this machine for as
 * long as this one runs. A free port alone is not enough: a port nothing listens on yet can be
 * picked by a cluster that starts meanwhile, and the standby RM then cannot become active.
 *
 * <p>Each claim is a file named after the port in a directory of the user's temp dir, holding
 * the claiming JVM's pid; a claim whose JVM is gone is stale and taken over. Claims are made
 * under a lock on that directory, so two launchers never take the same port. Test code only.
 */
final class PortRegistry {
  /** Below Linux's ephemeral range (32768 and up): no outgoing connection takes these. */
  private static final int FIRST = 20000;
  private static final int COUNT = 12000;

  private final Path dir;
  private final String pid = Long.toString(ProcessHandle.current().pid());
  private final List<Path> claimed = new ArrayList<>();
  private final Random random = new Random();

  PortRegistry() throws IOException {
    // Not java.io.tmpdir: the launcher gives each cluster one of its own.
    this(new File(System.getenv().getOrDefault("TMPDIR", "/tmp"),
        "tony-minicluster-ports-" + System.getProperty("user.name")).toPath());
  }

  PortRegistry(Path dir) throws IOException {
    this.dir = dir;
    Files.createDirectories(dir,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  /** A port of `host` that is free now and claimed by no other live minicluster. */
  synchronized int claim(String host) throws IOException {
    InetAddress address = InetAddress.getByName(host);
    try (RandomAccessFile lockFile = new RandomAccessFile(dir.resolve(".lock").toFile(), "rw");
        FileLock lock = lockFile.getChannel().lock()) {
      for (int attempt = 0; attempt < 200; attempt++) {
        int port = FIRST + random.nextInt(COUNT);
        Path claim = dir.resolve(Integer.toString(port));
        if (heldByLiveProcess(claim) || !bindable(address, port)) {
          continue;
        }
        Files.write(claim, pid.getBytes(StandardCharsets.UTF_8));
        claimed.add(claim);
        return port;
      }
    }
    throw new IOException("no free, unclaimed port in " + FIRST + "-" + (FIRST + COUNT - 1)
        + " on " + host + " (claims in " + dir + ")");
  }

  /** Gives back every port this registry claimed (those still claimed in this JVM's name). */
  synchronized void releaseAll() {
    for (Path claim : claimed) {
      try {
        if (pid.equals(read(claim))) {
          Files.delete(claim);
        }
      } catch (IOException e) {
        // gone already, or not ours any more: nothing to give back
      }
    }
    claimed.clear();
  }

  private boolean heldByLiveProcess(Path claim) {
    String owner;
    try {
      owner = read(claim);
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      return true; // unreadable: leave it alone
    }
    if (owner.equals(pid)) {
      return true;
    }
    try {
      return ProcessHandle.of(Long.parseLong(owner)).map(ProcessHandle::isAlive).orElse(false);
    } catch (NumberFormatException e) {
      return false; // not a claim this class wrote whole; claims are written under the lock
    }
  }

  private static String read(Path claim) throws IOException {
    return new String(Files.readAllBytes(claim), StandardCharsets.UTF_8).trim();
  }

  private static boolean bindable(InetAddress address, int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, address)) {
      return true;
    } catch (IOException taken) {
      return false;
    }
  }
}
