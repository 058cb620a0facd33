// The same program as sum_pairs.py, in C++: solidcoder check examples/sum_pairs.cpp --problem-file examples/sum_pairs.json
#include <iostream>

int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long a, b;
        std::cin >> a >> b;
        std::cout << a + b << '\n';
    }
}
