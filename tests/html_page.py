"""Opening a page the suite writes as a browser shows it: headless Chromium (Debian's `chromium`),
its rendered DOM and its console messages, for the tests of the HTML pages (class_page_test.py,
report_test.py). CHROMIUM is None where it is not installed (the tests then exit 77, skipped)."""
import html.parser, os, shutil, subprocess

CHROMIUM = shutil.which("chromium")


def open_page(path, tmp):
    """(the DOM Chromium rendered, its console messages, its exit status, its stderr)."""
    run = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
         "--v=0", "--user-data-dir=" + os.path.join(tmp, "chromium-profile"),
         "--dump-dom", "file://" + os.path.abspath(path)],
        capture_output=True, text=True, timeout=300)
    console = [l for l in run.stderr.splitlines() if ":CONSOLE" in l]
    return run.stdout, console, run.returncode, run.stderr[-2000:]


def console_is_read(tmp):
    """Whether a page with a script error, opened first, shows that error: else a page's empty
    console would prove nothing."""
    control = os.path.join(tmp, "control.html")
    with open(control, "w") as f:
        f.write("<!DOCTYPE html><p>x</p><script>undefinedName();</script>")
    _, said, _, _ = open_page(control, tmp)
    return any("undefinedName" in l for l in said)


class Elements(html.parser.HTMLParser):
    """The page's tags, the URLs it names (src, href) and its elements with an id or a data-*
    attribute, each as (tag, attributes, its text)."""
    VOID = {"meta", "br", "hr", "img", "link", "input", "col", "area", "base", "wbr", "source"}

    def __init__(self):
        super().__init__()
        self.elements, self.tags, self.urls, self.open = [], set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]
        element = (tag, a, []) if any(k.startswith("data-") or k == "id" for k in a) else None
        if element:
            self.elements.append(element)
        if tag not in self.VOID:
            self.open.append((tag, element))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.open.pop()

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                del self.open[i:]
                break

    def handle_data(self, data):
        for _, element in self.open:
            if element:
                element[2].append(data)

    def text(self, element):
        return "".join(element[2]).strip()
