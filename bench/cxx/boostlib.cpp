// The benchmark's shared library: Boost.Geometry, Boost.Spirit and the
// Boost Graph Library at -O2, each ending in a callback the program blocks
// in, so threads stand in the library's code at the crash.
#include <boost/geometry.hpp>
#include <boost/geometry/geometries/point_xy.hpp>
#include <boost/geometry/geometries/polygon.hpp>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/spirit/include/qi.hpp>
#include <string>
#include <vector>

#include "boostlib.h"

namespace bg = boost::geometry;
namespace qi = boost::spirit::qi;

__attribute__((noinline)) double lib_area(int n, void (*cb)(int))
{
	typedef bg::model::d2::point_xy<double> Point;
	bg::model::polygon<Point> poly;
	for (int i = 0; i < n; i++)
		bg::append(poly.outer(), Point(i, i * i % 7));
	bg::correct(poly);
	double a = bg::area(poly);
	cb(n);
	return a;
}

__attribute__((noinline)) size_t lib_parse(const char *text, void (*cb)(int))
{
	std::string s(text);
	std::vector<double> v;
	auto b = s.begin();
	qi::phrase_parse(b, s.end(), qi::double_ % ',', qi::space, v);
	cb(static_cast<int>(v.size()));
	return v.size();
}

__attribute__((noinline)) int lib_paths(int n, void (*cb)(int))
{
	using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
					    boost::no_property, boost::property<boost::edge_weight_t, int>>;
	Graph g(n);
	for (int i = 0; i + 1 < n; i++)
		boost::add_edge(i, i + 1, 1, g);
	std::vector<int> d(n);
	boost::dijkstra_shortest_paths(g, 0, boost::distance_map(&d[0]));
	cb(d[n - 1]);
	return d[n - 1];
}
