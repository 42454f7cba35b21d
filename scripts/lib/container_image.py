#!/usr/bin/env python3
"""Builds deploy/Dockerfile and runs the image it makes, without a Docker engine (none runs on the
project's machines and no registry serves base images): docs/decisions/0360.

    container_image.py context-files
        prints the build context, one path a line: the files .dockerignore lets in, by Docker's rules
    container_image.py build OUTPUT [--build-arg NAME=VALUE]...
        assembles the context under .build/image/context, then executes the Dockerfile's
        instructions one by one as layers (overlayfs directories): FROM, ARG, WORKDIR, COPY
        (from the context or --from a stage), RUN (chrooted into the stage's file system, with
        `--mount=type=cache`), USER, EXPOSE, ENTRYPOINT, CMD. Any other instruction is an error.
        Writes the image (its layers, user, entry point, command) to OUTPUT as JSON.
    container_image.py run IMAGE [--read-only] [--mount HOST:CONTAINER]... [--env NAME=VALUE]...
                               [--group-add GID]... [--entrypoint PATH] [-- ARGUMENT...]
        runs the image as a container runtime would: its layers stacked by overlayfs (read-only with
        --read-only, as the chart's readOnlyRootFilesystem), /proc and /dev mounted, the mounts
        bound, chrooted, as the image's USER with only --group-add as supplementary groups, and
        the image's ENTRYPOINT with the arguments (else its CMD). SIGTERM and SIGINT are passed on;
        the exit status is the container's.

Base images: `swift:6.3-bookworm` is the machine itself (Debian 12 with the Swift toolchain at
/opt/swift, checked to be that release), read-only under every build layer; `debian:bookworm-slim`
is a Debian bookworm minbase root file system made by debootstrap (what the slim image is made
from), cached for the machine under /var/cache/push-gateway/base-images. Layers are cached under
.build/image/layers by their instruction and everything before it, as Docker's build cache does.
Needs root; every mount lives in a private mount namespace and is gone when the command ends."""

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCKERFILE = os.path.join(REPOSITORY, "deploy/Dockerfile")
DOCKERIGNORE = os.path.join(REPOSITORY, ".dockerignore")
WORK = os.path.join(REPOSITORY, ".build/image")
BASE_IMAGES = os.environ.get("PUSH_GATEWAY_BASE_IMAGE_CACHE", "/var/cache/push-gateway/base-images")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The mode of `/` in an image. Every layer's top folder has it: overlayfs takes the root's mode from
# the topmost layer, and a 0700 one (what mkdtemp makes) would shut every non-root user out.
ROOT_MODE = 0o755


def fail(message):
    print(f"container_image: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# .dockerignore: Docker's rules (moby/patternmatcher). Each line is a pattern, `!` makes it an
# exception, the last pattern that matches a path or one of its parent folders decides.


class IgnorePattern:
    def __init__(self, text):
        self.exception = text.startswith("!")
        cleaned = os.path.normpath(text[1:].strip() if self.exception else text).lstrip("/")
        self.components = cleaned.split("/")
        self.regex = re.compile("^" + self.translate(cleaned) + "$")

    @staticmethod
    def translate(pattern):
        out, index = "", 0
        while index < len(pattern):
            char = pattern[index]
            if pattern.startswith("**/", index):
                out, index = out + "(?:.*/)?", index + 3
                continue
            if pattern.startswith("**", index):
                out, index = out + ".*", index + 2
                continue
            if char == "*":
                out += "[^/]*"
            elif char == "?":
                out += "[^/]"
            elif char == "[":
                end = pattern.index("]", index)
                out += "[" + pattern[index + 1:end].replace("!", "^", 1) + "]"
                index = end
            elif char == "\\" and index + 1 < len(pattern):
                index += 1
                out += re.escape(pattern[index])
            else:
                out += re.escape(char)
            index += 1
        return out

    def matches(self, path):
        """The path itself or one of its parent folders matches."""
        parts = path.split("/")
        return any(self.regex.match("/".join(parts[:count])) for count in range(len(parts), 0, -1))

    def could_match_below(self, folder):
        """Whether the pattern might match something inside `folder` (used to skip whole folders)."""
        for pattern_part, folder_part in zip(self.components, folder.split("/")):
            if "**" in pattern_part:
                return True
            if not re.match("^" + self.translate(pattern_part) + "$", folder_part):
                return False
        return True


def ignore_patterns():
    with open(DOCKERIGNORE) as file:
        lines = [line.strip() for line in file]
    return [IgnorePattern(line) for line in lines if line and not line.startswith("#")]


def is_excluded(path, patterns):
    excluded = False
    for pattern in patterns:
        if pattern.matches(path):
            excluded = not pattern.exception
    return excluded


def context_files():
    """Every file (and symbolic link) of the repository .dockerignore lets into the context, sorted."""
    patterns = ignore_patterns()
    exceptions = [pattern for pattern in patterns if pattern.exception]
    found = []
    for folder, subfolders, files in os.walk(REPOSITORY):
        relative = os.path.relpath(folder, REPOSITORY)
        prefix = "" if relative == "." else relative + "/"
        kept = []
        for name in sorted(subfolders):
            path = prefix + name
            if os.path.islink(os.path.join(folder, name)):
                files.append(name)
            elif not is_excluded(path, patterns) or any(p.could_match_below(path) for p in exceptions):
                kept.append(name)
        subfolders[:] = kept
        found.extend(prefix + name for name in files if not is_excluded(prefix + name, patterns))
    return sorted(found)


def assemble_context(target):
    """Makes `target` hold exactly the context, keeping modification times (so the build stays
    incremental) and removing whatever a previous assembly left that is no longer in it."""
    wanted = set(context_files())
    for folder, _, files in os.walk(target, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.relpath(path, target) not in wanted:
                os.remove(path)
        if folder != target and not os.listdir(folder):
            os.rmdir(folder)
    for relative in wanted:
        source, destination = os.path.join(REPOSITORY, relative), os.path.join(target, relative)
        if os.path.lexists(destination):
            old, new = os.lstat(destination), os.lstat(source)
            if old.st_mtime_ns == new.st_mtime_ns and old.st_size == new.st_size and old.st_mode == new.st_mode:
                continue
            os.remove(destination)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(source, destination, follow_symlinks=False)
    return sorted(wanted)


# ---------------------------------------------------------------------------------------------
# The Dockerfile.


def instructions(path):
    """(keyword, text) per instruction: continuation lines joined, comments and blank lines dropped."""
    result, pending = [], ""
    with open(path) as file:
        for line in file:
            stripped = line.strip()
            if stripped.startswith("#") or (not stripped and not pending):
                continue
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            text = (pending + stripped).strip()
            pending = ""
            keyword, _, rest = text.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def flags(text):
    """Leading `--name=value` flags of an instruction, and the rest."""
    found = {}
    while text.startswith("--"):
        flag, _, text = text.partition(" ")
        name, _, value = flag[2:].partition("=")
        found[name] = value
        text = text.strip()
    return found, text


# ---------------------------------------------------------------------------------------------
# Mounts. Every command that mounts runs in its own mount namespace (see main).


def mount(*arguments):
    subprocess.run(["mount", *arguments], check=True)


def overlay(layers, upper=None):
    """Mounts the layers (bottom first) at a fresh folder and returns it; with `upper`, writes go
    there, without it the file system is read-only. `release` undoes it."""
    target = tempfile.mkdtemp(prefix="root-", dir=scratch())
    lower = ":".join(reversed(layers))
    if upper is None and len(layers) == 1:
        mount("--bind", "-o", "ro", layers[0], target)
    elif upper is None:
        mount("-t", "overlay", "overlay", "-o", f"lowerdir={lower}", target)
    else:
        work = tempfile.mkdtemp(prefix="work-", dir=scratch())
        OVERLAY_WORK[target] = work
        mount("-t", "overlay", "overlay", "-o", f"lowerdir={lower},upperdir={upper},workdir={work}", target)
    return target


OVERLAY_WORK = {}


def release(root):
    """Unmounts an overlay and everything mounted inside it, and removes its folders."""
    # A read-only container root is the overlay with a bind of itself on top: unmount both.
    while subprocess.run(["mountpoint", "-q", root]).returncode == 0:
        subprocess.run(["umount", "-R", root], check=True)
    os.rmdir(root)
    work = OVERLAY_WORK.pop(root, None)
    if work:
        shutil.rmtree(work)


def scratch():
    path = os.path.join(WORK, "tmp")
    os.makedirs(path, exist_ok=True)
    return path


def mount_system(root, resolver=False):
    """/proc and /dev as every container runtime gives them (the Swift runtime reads its arguments
    from /proc/self/cmdline); with `resolver`, the machine's /etc/resolv.conf (a build's network)."""
    mount("-t", "proc", "proc", os.path.join(root, "proc"))
    mount("--rbind", "/dev", os.path.join(root, "dev"))
    if resolver:
        target = os.path.join(root, "etc/resolv.conf")
        if not os.path.exists(target):
            open(target, "a").close()
        mount("--bind", "/etc/resolv.conf", target)


# ---------------------------------------------------------------------------------------------
# Base images.


# The packages the official swift:6.3-bookworm image installs before its toolchain.
SWIFT_IMAGE_PACKAGES = (
    "binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev libsqlite3-0 "
    "libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev"
)
TOOLCHAIN = "/opt/swift"


def base_image(name):
    """(layers, environment, read-only binds, identity for the build cache) of a base image the
    build may start FROM."""
    if name == "debian:bookworm-slim":
        root = debootstrapped("bookworm")
        return [root], {"PATH": DEFAULT_PATH}, [], root
    if name == "swift:6.3-bookworm":
        # Debian bookworm with the image's packages, and this machine's toolchain (the same
        # release) bound read-only at /opt/swift.
        version = subprocess.run([TOOLCHAIN + "/usr/bin/swift", "--version"], capture_output=True, text=True).stdout
        if not re.search(r"Swift version 6\.3(\.|\s)", version):
            fail(f"the toolchain at {TOOLCHAIN} stands in for swift:6.3's but is: {version.strip()}")
        layers = [debootstrapped("bookworm")]
        layers.append(base_layer(layers, "swift-6.3-bookworm-packages", "apt-get update && DEBIAN_FRONTEND=noninteractive "
                                 f"apt-get install -y --no-install-recommends {SWIFT_IMAGE_PACKAGES} "
                                 "&& rm -rf /var/lib/apt/lists/*"))
        return layers, {"PATH": TOOLCHAIN + "/usr/bin:" + DEFAULT_PATH}, [(TOOLCHAIN, TOOLCHAIN)], version + layers[-1]
    fail(f"no stand-in for the base image {name}")


def base_layer(layers, name, command):
    """A layer of a base image, made once per machine by `command` on top of `layers`."""
    folder = os.path.join(BASE_IMAGES, name)
    with machine_lock():
        if not os.path.isdir(folder):
            print(f"container_image: making the base layer {name} (once per machine)")
            upper = tempfile.mkdtemp(prefix=name + "-", dir=BASE_IMAGES)
            os.chmod(upper, ROOT_MODE)
            root = overlay(layers, upper)
            status = chrooted(root, ["/bin/sh", "-c", command], {"PATH": DEFAULT_PATH, "HOME": "/root"}, "/")
            release(root)
            if status != 0:
                shutil.rmtree(upper)
                fail(f"making the base layer {name} failed ({status})")
            os.rename(upper, folder)
    return folder


def machine_lock():
    os.makedirs(BASE_IMAGES, exist_ok=True)
    lock = open(os.path.join(BASE_IMAGES, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def chrooted(root, command, environment, workdir, binds=()):
    """Runs `command` as root chrooted into `root`, with /proc, /dev, the machine's resolver (a
    build's network) and `binds` (read-only), and returns its exit status."""
    mount_system(root, resolver=True)
    for host, container in binds:
        os.makedirs(root + container, exist_ok=True)
        mount("--bind", "-o", "ro", host, root + container)

    def enter():
        os.chroot(root)
        os.chdir(workdir)

    return subprocess.run(command, env=environment, preexec_fn=enter).returncode


def debootstrapped(suite):
    root = os.path.join(BASE_IMAGES, f"debian-{suite}-minbase")
    with machine_lock():
        if os.path.isdir(root):
            return root
        building = tempfile.mkdtemp(prefix=f"debian-{suite}-", dir=BASE_IMAGES)
        os.chmod(building, ROOT_MODE)
        print(f"container_image: making the Debian {suite} minbase file system (debootstrap, once per machine)")
        log = building + ".log"
        with open(log, "w") as output:
            status = subprocess.run(
                ["debootstrap", "--variant=minbase", suite, building, "http://deb.debian.org/debian"],
                stdout=output, stderr=subprocess.STDOUT).returncode
        if status != 0:
            fail(f"debootstrap failed; see {log}")
        # As in the official image: no downloaded archives kept.
        for name in os.listdir(os.path.join(building, "var/cache/apt/archives")):
            if name.endswith(".deb"):
                os.remove(os.path.join(building, "var/cache/apt/archives", name))
        os.rename(building, root)
        os.remove(log)
    return root


# ---------------------------------------------------------------------------------------------
# The build.


class Stage:
    def __init__(self, name, base):
        self.name = name
        self.layers, self.environment, self.binds, identity = base_image(base)
        self.key = hashlib.sha256(f"{base}\n{identity}".encode()).hexdigest()
        self.workdir = "/"
        self.arguments = {}
        self.user = "0:0"
        self.entrypoint, self.command, self.exposed = [], [], []

    def layer(self, description, execute):
        """Adds the layer that `execute(root)` makes, or the cached one from an earlier build."""
        self.key = hashlib.sha256((self.key + "\n" + description).encode()).hexdigest()
        layers = os.path.join(WORK, "layers")
        folder = os.path.join(layers, self.key)
        if not os.path.isdir(folder):
            os.makedirs(layers, exist_ok=True)
            upper = tempfile.mkdtemp(prefix="layer-", dir=layers)
            os.chmod(upper, ROOT_MODE)
            root = overlay(self.layers, upper)
            try:
                execute(root)
            except BaseException:
                release(root)
                shutil.rmtree(upper)
                raise
            release(root)
            os.rename(upper, folder)
            print(f"container_image: {self.name}: {description.splitlines()[0][:100]}")
        else:
            print(f"container_image: {self.name}: cached: {description.splitlines()[0][:100]}")
        self.layers.append(folder)

    def path(self, path):
        return path if path.startswith("/") else os.path.join(self.workdir, path)


def tree_digest(path):
    """A digest of a file tree's names, modes and contents, for the build cache."""
    digest = hashlib.sha256()
    entries = []
    if os.path.isdir(path) and not os.path.islink(path):
        for folder, subfolders, files in os.walk(path):
            subfolders.sort()
            entries.extend(os.path.join(folder, name) for name in sorted(files))
    else:
        entries = [path]
    for entry in entries:
        info = os.lstat(entry)
        digest.update(f"{os.path.relpath(entry, path)}\0{info.st_mode}\0".encode())
        if os.path.islink(entry):
            digest.update(os.readlink(entry).encode())
        else:
            with open(entry, "rb") as file:
                digest.update(hashlib.sha256(file.read()).digest())
    return digest.hexdigest()


def copy_into(source, root, destination, directory_destination):
    """COPY's rules: a folder's contents go into the destination folder; a file goes to the
    destination, or into it when it is a folder (ends in `/` or several sources). Owner root."""
    target = root + destination
    if os.path.isdir(source) and not os.path.islink(source):
        os.makedirs(target, exist_ok=True)
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True, copy_function=shutil.copy2)
        for folder, subfolders, files in os.walk(target):
            for name in subfolders + files:
                os.lchown(os.path.join(folder, name), 0, 0)
        return
    if directory_destination:
        os.makedirs(target, exist_ok=True)
        target = os.path.join(target, os.path.basename(source))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(source, target, follow_symlinks=False)
    os.lchown(target, 0, 0)


def run_instruction(stage, text, root):
    options, command = flags(text)
    mounts = []
    for name, value in options.items():
        if name != "mount":
            fail(f"RUN --{name} is not supported")
        settings = dict(item.split("=", 1) for item in value.split(","))
        if settings.get("type") != "cache" or "target" not in settings:
            fail(f"RUN --mount={value}: only type=cache with a target is supported")
        cache = os.path.join(WORK, "cache", settings["target"].strip("/").replace("/", "-"))
        os.makedirs(cache, exist_ok=True)
        mounts.append((cache, settings["target"], settings.get("sharing") == "locked"))
    locks = []
    for cache, target, locked in mounts:
        os.makedirs(root + target, exist_ok=True)
        mount("--bind", cache, root + target)
        if locked:
            locks.append(open(cache + ".lock", "w"))
            fcntl.flock(locks[-1], fcntl.LOCK_EX)
    environment = dict(stage.environment, HOME="/root", **stage.arguments)
    status = chrooted(root, ["/bin/sh", "-c", command], environment, stage.workdir, stage.binds)
    for lock in locks:
        lock.close()
    if status != 0:
        fail(f"{stage.name}: RUN exited {status}: {command}")


def build(output, build_arguments):
    context = os.path.join(WORK, "context")
    os.makedirs(context, exist_ok=True)
    included = assemble_context(context)
    copied = set()
    stages, stage = {}, None
    for keyword, text in instructions(DOCKERFILE):
        if keyword == "FROM":
            base, _, name = text.partition(" AS ")
            stage = Stage(name.strip() or f"stage-{len(stages)}", base.strip())
            stages[stage.name] = stage
        elif keyword == "ARG":
            name, _, default = text.partition("=")
            stage.arguments[name] = build_arguments.get(name, default)
            stage.key = hashlib.sha256(f"{stage.key}\nARG {name}={stage.arguments[name]}".encode()).hexdigest()
        elif keyword == "WORKDIR":
            stage.workdir = stage.path(text)
            workdir = stage.workdir
            stage.layer(f"WORKDIR {workdir}", lambda root: os.makedirs(root + workdir, exist_ok=True))
        elif keyword == "COPY":
            options, rest = flags(text)
            *sources, destination = shlex.split(rest)
            destination_path = stage.path(destination)
            into_folder = destination.endswith("/") or len(sources) > 1
            if "from" in options:
                origin = stages[options["from"]]
                origin_root = overlay(origin.layers)
                resolved = [origin_root + source for source in sources]
            else:
                origin_root = None
                resolved = []
                for source in sources:
                    relative = os.path.normpath(source)
                    inside = [path for path in included if path == relative or path.startswith(relative + "/")]
                    if not inside:
                        fail(f"COPY {source}: not in the build context (check .dockerignore)")
                    copied.update(inside)
                    resolved.append(os.path.join(context, relative))
            description = f"COPY {rest}\n" + "\n".join(tree_digest(path) for path in resolved)

            def copy(root, resolved=resolved, destination_path=destination_path, into_folder=into_folder):
                for source in resolved:
                    copy_into(source, root, destination_path, into_folder)

            stage.layer(description, copy)
            if origin_root:
                release(origin_root)
        elif keyword == "RUN":
            # ARG values are part of a RUN's cache key, as in Docker.
            arguments = " ".join(f"{name}={value}" for name, value in sorted(stage.arguments.items()))
            stage.layer(f"RUN {text}\n{stage.workdir}\n{arguments}", lambda root, text=text: run_instruction(stage, text, root))
        elif keyword == "USER":
            stage.user = text
        elif keyword == "EXPOSE":
            stage.exposed.extend(text.split())
        elif keyword == "ENTRYPOINT":
            stage.entrypoint = json.loads(text)
        elif keyword == "CMD":
            stage.command = json.loads(text)
        else:
            fail(f"the Dockerfile instruction {keyword} is not supported")
    unused = sorted(set(included) - copied)
    if unused:
        fail("the context holds files no COPY uses (tighten .dockerignore): " + ", ".join(unused[:10]))
    # Only this build's layers are kept: every source change makes new ones (the binary's is large).
    kept = {layer for built in stages.values() for layer in built.layers}
    layers = os.path.join(WORK, "layers")
    for name in os.listdir(layers):
        if re.fullmatch(r"[0-9a-f]{64}", name) and os.path.join(layers, name) not in kept:
            shutil.rmtree(os.path.join(layers, name))
    image = {
        "layers": stage.layers, "user": stage.user, "entrypoint": stage.entrypoint, "command": stage.command,
        "workdir": stage.workdir, "environment": stage.environment, "exposed": stage.exposed,
    }
    with open(output, "w") as file:
        json.dump(image, file, indent=2)
    print(f"container_image: built {output} ({len(stage.layers)} layers)")


# ---------------------------------------------------------------------------------------------
# Running an image.


def run(image_file, options):
    with open(image_file) as file:
        image = json.load(file)
    upper = tempfile.mkdtemp(prefix="container-", dir=scratch())
    os.chmod(upper, ROOT_MODE)
    root = overlay(image["layers"], upper)
    for host, container in options["mounts"]:
        target = root + container
        if os.path.isdir(host):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
    if options["read_only"]:
        mount("--bind", root, root)
        mount("-o", "remount,bind,ro", root)
    mount_system(root)
    for host, container in options["mounts"]:
        mount("--bind", "-o", "ro", host, root + container)
        mount("-o", "remount,bind,ro", root + container)
    user, _, group = image["user"].partition(":")
    uid, gid = int(user), int(group or user)
    groups = options["groups"]
    program = [options["entrypoint"]] if options["entrypoint"] else image["entrypoint"]
    arguments = program + (options["arguments"] or ([] if options["entrypoint"] else image["command"]))
    environment = dict(image["environment"], **options["environment"])

    def enter():
        os.chroot(root)
        os.chdir(image["workdir"])
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)

    child = subprocess.Popen(arguments, env=environment, preexec_fn=enter)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda received, _: child.send_signal(received))
    status = child.wait()
    release(root)
    shutil.rmtree(upper)
    return status if status >= 0 else 128 - status


def parse_run(arguments):
    options = {"read_only": False, "mounts": [], "environment": {}, "groups": [], "entrypoint": None,
               "arguments": []}
    while arguments:
        argument = arguments.pop(0)
        if argument == "--":
            options["arguments"] = arguments
            break
        if argument == "--read-only":
            options["read_only"] = True
        elif argument == "--mount":
            host, _, container = arguments.pop(0).partition(":")
            options["mounts"].append((os.path.abspath(host), container))
        elif argument == "--env":
            name, _, value = arguments.pop(0).partition("=")
            options["environment"][name] = value
        elif argument == "--group-add":
            options["groups"].append(int(arguments.pop(0)))
        elif argument == "--entrypoint":
            options["entrypoint"] = arguments.pop(0)
        else:
            fail(f"unknown run option {argument}")
    return options


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["context-files"]:
        print("\n".join(context_files()))
        return 0
    if os.geteuid() != 0:
        fail("needs root (mounts and chroot)")
    # A private mount namespace: every mount this command makes disappears with it.
    if os.environ.get("CONTAINER_IMAGE_NAMESPACE") != "1":
        os.environ["CONTAINER_IMAGE_NAMESPACE"] = "1"
        os.execvp("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable, *sys.argv])
    if arguments[:1] == ["build"] and len(arguments) >= 2:
        build_arguments = {}
        rest = arguments[2:]
        while rest:
            if rest.pop(0) != "--build-arg" or not rest:
                fail("usage: build OUTPUT [--build-arg NAME=VALUE]...")
            name, _, value = rest.pop(0).partition("=")
            build_arguments[name] = value
        build(os.path.abspath(arguments[1]), build_arguments)
        return 0
    if arguments[:1] == ["run"] and len(arguments) >= 2:
        return run(arguments[1], parse_run(arguments[2:]))
    fail("usage: context-files | build OUTPUT [--build-arg NAME=VALUE]... | run IMAGE [options] [-- ARGUMENT...]")


if __name__ == "__main__":
    sys.exit(main())
