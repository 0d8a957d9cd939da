// C++ runtime coverage: exceptions, the standard library and iostreams.
//
// Covers: throw/catch across several frames (unwinding through the
// .eh_frame tables with destructors running in order), catch by base
// class, rethrow, nested try blocks, std::exception::what(), exceptions
// from the library (std::out_of_range from vector::at, std::bad_alloc is
// not forced), noexcept and std::terminate avoided; std::vector (sort,
// reserve, erase-remove), std::map/std::unordered_map (ordered output
// only), std::string operations, std::unique_ptr/shared_ptr lifetimes,
// virtual dispatch, templates, lambdas and std::function, static
// initialisation order, iostream formatting (std::setw, std::setprecision,
// std::hex, std::fixed, std::scientific, std::boolalpha), std::ostringstream
// and std::istringstream parsing.
// Exit status: 3.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::vector<std::string> g_log;

struct Tracer {
    std::string name;
    explicit Tracer(std::string n) : name(std::move(n)) { g_log.push_back("+" + name); }
    ~Tracer() { g_log.push_back("-" + name); }
};

struct MyError : std::runtime_error {
    int code;
    MyError(const std::string &m, int c) : std::runtime_error(m), code(c) {}
};

struct DerivedError : MyError {
    DerivedError() : MyError("derived", 7) {}
};

[[gnu::noinline]] void level3(int mode)
{
    Tracer t("level3");
    if (mode == 1) throw MyError("from level3", 42);
    if (mode == 2) throw DerivedError();
    if (mode == 3) throw 17;
    if (mode == 4) throw std::string("a string");
}

[[gnu::noinline]] void level2(int mode)
{
    Tracer t("level2");
    level3(mode);
}

[[gnu::noinline]] int level1(int mode)
{
    Tracer t("level1");
    try {
        level2(mode);
    } catch (const DerivedError &e) {
        g_log.push_back("level1 caught derived, rethrowing");
        throw;
    }
    return mode;
}

void print_log()
{
    std::cout << "  log:";
    for (auto &s : g_log) std::cout << ' ' << s;
    std::cout << '\n';
    g_log.clear();
}

void test_exceptions()
{
    std::cout << "== exceptions\n";
    for (int mode = 0; mode <= 4; mode++) {
        try {
            int r = level1(mode);
            std::cout << "mode " << mode << " returned " << r << '\n';
        } catch (const MyError &e) {
            std::cout << "mode " << mode << " caught MyError what=" << e.what() << " code=" << e.code
                      << '\n';
        } catch (int v) {
            std::cout << "mode " << mode << " caught int " << v << '\n';
        } catch (const std::string &s) {
            std::cout << "mode " << mode << " caught string " << s << '\n';
        }
        print_log();
    }
    std::vector<int> v{1, 2, 3};
    try {
        std::cout << v.at(10);
    } catch (const std::out_of_range &e) {
        std::cout << "out_of_range caught (what non-empty=" << (e.what()[0] != 0) << ")\n";
    }
    try {
        try {
            throw std::logic_error("inner");
        } catch (const std::exception &e) {
            std::cout << "inner catch: " << e.what() << '\n';
            throw std::runtime_error(std::string("outer from ") + e.what());
        }
    } catch (const std::exception &e) {
        std::cout << "outer catch: " << e.what() << '\n';
    }
    try {
        std::stoi("not a number");
    } catch (const std::invalid_argument &) {
        std::cout << "stoi invalid_argument\n";
    }
    std::exception_ptr ep;
    try {
        throw MyError("stored", 5);
    } catch (...) {
        ep = std::current_exception();
    }
    try {
        std::rethrow_exception(ep);
    } catch (const MyError &e) {
        std::cout << "rethrow_exception: " << e.what() << ' ' << e.code << '\n';
    }
}

struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual std::string name() const = 0;
};
struct Rect : Shape {
    double w, h;
    Rect(double a, double b) : w(a), h(b) {}
    double area() const override { return w * h; }
    std::string name() const override { return "rect"; }
};
struct Circle : Shape {
    double r;
    explicit Circle(double x) : r(x) {}
    double area() const override { return 3.14159265358979 * r * r; }
    std::string name() const override { return "circle"; }
};

template <typename T> T sum_all(const std::vector<T> &v) { return std::accumulate(v.begin(), v.end(), T{}); }

void test_containers()
{
    std::cout << "== containers\n";
    std::vector<int> v;
    unsigned x = 12345;
    for (int i = 0; i < 1000; i++) {
        x = x * 1103515245u + 12345u;
        v.push_back(static_cast<int>((x >> 16) % 1000));
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::cout << "unique values " << v.size() << " first " << v.front() << " last " << v.back()
              << " sum " << sum_all(v) << '\n';
    v.erase(std::remove_if(v.begin(), v.end(), [](int a) { return a % 3 != 0; }), v.end());
    std::cout << "multiples of 3: " << v.size() << '\n';

    std::map<std::string, int> wc;
    std::istringstream text("the quick brown fox jumps over the lazy dog the fox");
    std::string w;
    while (text >> w) wc[w]++;
    for (auto &kv : wc) std::cout << kv.first << '=' << kv.second << ' ';
    std::cout << '\n';

    std::unordered_map<int, std::string> um;
    for (int i = 0; i < 100; i++) um[i * 7 % 101] = std::to_string(i);
    std::vector<int> keys;
    for (auto &kv : um) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
    std::cout << "unordered_map size " << um.size() << " key[50]=" << keys[50] << " value=" << um[keys[50]]
              << '\n';

    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.push_back(std::make_unique<Rect>(2, 3));
    shapes.push_back(std::make_unique<Circle>(1.5));
    shapes.push_back(std::make_unique<Rect>(0.5, 8));
    std::sort(shapes.begin(), shapes.end(), [](auto &a, auto &b) { return a->area() < b->area(); });
    for (auto &s : shapes) std::cout << s->name() << ':' << std::fixed << std::setprecision(3) << s->area() << ' ';
    std::cout << std::defaultfloat << '\n';

    {
        auto sp = std::make_shared<Tracer>("shared");
        {
            auto sp2 = sp;
            std::cout << "use_count " << sp.use_count() << '\n';
        }
        std::cout << "use_count " << sp.use_count() << '\n';
    }
    print_log();

    std::function<int(int)> fact = [&](int n) { return n <= 1 ? 1 : n * fact(n - 1); };
    std::cout << "fact(10)=" << fact(10) << '\n';
}

void test_strings()
{
    std::cout << "== strings\n";
    std::string s = "Hello, RISC-V world";
    std::cout << "size " << s.size() << " find(RISC) " << s.find("RISC") << " substr " << s.substr(7, 6)
              << '\n';
    std::string u = s;
    std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
    std::cout << u << '\n';
    std::string big;
    for (int i = 0; i < 200; i++) big += std::to_string(i) + ",";
    std::cout << "big size " << big.size() << " rfind(19) " << big.rfind("19,") << '\n';
    s.replace(0, 5, "Goodbye");
    s.insert(s.size(), "!");
    std::cout << s << " compare " << (s.compare("Goodbye") > 0) << '\n';
    std::cout << "stod " << std::stod("2.5e3") << " stoll " << std::stoll("-9000000000") << '\n';
}

void test_iostream()
{
    std::cout << "== iostream\n";
    std::cout << std::setw(8) << 42 << '|' << std::left << std::setw(8) << 42 << '|' << std::right << '\n';
    std::cout << std::hex << 255 << ' ' << std::showbase << 255 << std::noshowbase << std::dec << '\n';
    std::cout << std::setfill('0') << std::setw(6) << 123 << std::setfill(' ') << '\n';
    std::cout << std::scientific << std::setprecision(4) << 12345.678 << ' ' << std::fixed << 0.000123
              << std::defaultfloat << '\n';
    std::cout << std::setprecision(17) << 0.1 << ' ' << 1.0 / 3 << std::setprecision(6) << '\n';
    std::cout << std::boolalpha << true << ' ' << false << std::noboolalpha << '\n';
    std::ostringstream os;
    os << "pi=" << 3.14159 << " n=" << -17 << " c=" << 'x';
    std::cout << os.str() << " (len " << os.str().size() << ")\n";
    std::istringstream is("10 20.5 word 0x1f");
    int a;
    double b;
    std::string c;
    int d;
    is >> a >> b >> c >> std::hex >> d;
    std::cout << a << ' ' << b << ' ' << c << ' ' << d << '\n';
    std::cerr << "this goes to stderr\n";
}

struct StaticInit {
    int value;
    StaticInit() : value(99) { g_log.push_back("static-init"); }
};
StaticInit g_static;

} // namespace

int main()
{
    std::cout << "static init ran: " << g_static.value << ' ' << (g_log.size() == 1 ? g_log[0] : "?") << '\n';
    g_log.clear();
    test_exceptions();
    test_containers();
    test_strings();
    test_iostream();
    std::cout << "done" << std::endl;
    return 3;
}
